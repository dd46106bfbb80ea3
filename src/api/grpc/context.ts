// What every handler shares: the service, the hooks, the star's identity, the registry of long-lived
// calls (so shutdown can end them), and the wrapper that turns a handler's result or throw into a
// grpc-js callback.

import * as grpc from '@grpc/grpc-js';
import type { StreamService } from '../../core/service-api.ts';
import type { GrpcAuthHooks, GrpcAuthRequest, ReadPlanQuery, ReadPlanResult } from './hooks.ts';
import { toGrpcFailure } from './status-mapping.ts';

export interface StarIdentity {
  id: string;
  /** Resolved once the server is bound. */
  address: string;
  startedAtMs: number;
  nowMs(): number;
  settle?(): Promise<void>;
  readPlan?(bucket: string, key: string, query: ReadPlanQuery): Promise<ReadPlanResult>;
}

/** Long-lived calls (subscriptions, producer sessions) register here so close() can end them. */
export class LiveCalls {
  private readonly enders = new Set<() => void>();
  private closing = false;

  get isClosing(): boolean { return this.closing; }

  /** Registers `end`, called once at shutdown; the returned function unregisters it. */
  add(end: () => void): () => void {
    if (this.closing) {
      queueMicrotask(end); // never re-enter the caller before it holds its unregister function
      return () => {};
    }
    this.enders.add(end);
    return () => { this.enders.delete(end); };
  }

  endAll(): void {
    this.closing = true;
    for (const end of [...this.enders]) end();
    this.enders.clear();
  }
}

export interface GrpcContext {
  service: StreamService;
  auth?: GrpcAuthHooks;
  star: StarIdentity;
  live: LiveCalls;
}

/** Runs the auth hook when present (auth off otherwise). */
export async function authorize(ctx: GrpcContext, req: GrpcAuthRequest): Promise<void> {
  if (ctx.auth?.authorize) await ctx.auth.authorize(req);
}

/** A unary handler from an async function of the request and its metadata. */
export function unary<Req, Res>(
  fn: (request: Req, metadata: grpc.Metadata) => Promise<Res> | Res,
): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    let result: Promise<Res>;
    try {
      result = Promise.resolve(fn(call.request, call.metadata));
    } catch (err) {
      result = Promise.reject(err);
    }
    result.then(
      (res) => callback(null, res),
      (err: unknown) => callback(toGrpcFailure(err)),
    );
  };
}
