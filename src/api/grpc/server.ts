// startGrpcServer: binds @grpc/grpc-js on `listen` and serves svc.v1.DataService and
// svc.v1.AdminService over a StreamService. The schema is loaded at runtime from proto/.
//
//   const grpcServer = await startGrpcServer({ service, listen: '127.0.0.1:0' });
//   … grpcServer.port …
//   await grpcServer.close();

import * as grpc from '@grpc/grpc-js';
import { READPLAN_TTL_MS_DEFAULT } from '../../config/limits.ts';
import type { StreamService } from '../../core/service-api.ts';
import { adminServiceHandlers } from './admin-service.ts';
import { LiveCalls, type GrpcContext } from './context.ts';
import { dataServiceHandlers } from './data-service.ts';
import type { GrpcAuthHooks, GrpcStarHooks, ReadPlanVending } from './hooks.ts';
import { loadSvcProto } from './proto.ts';

/** Largest message either side may send: a full append batch (100 MiB content) plus framing. */
export const GRPC_MESSAGE_BYTES_MAX = 128 * 1024 * 1024;
/** How long close() waits for in-flight unary calls before cutting every connection. */
export const GRPC_SHUTDOWN_GRACE_MS = 5000;

export interface GrpcServerOptions {
  service: StreamService;
  /** host:port; port 0 picks a free one. */
  listen: string;
  /** TLS (or mTLS) credentials; default plaintext. */
  credentials?: grpc.ServerCredentials;
  /** src/auth's hooks. Absent: auth off, and ExchangeToken and credential verbs answer UNIMPLEMENTED. */
  auth?: GrpcAuthHooks;
  /** The star's identity and its optional settle hook. */
  star?: GrpcStarHooks;
  /** ReadPlan's vending (`--readplan-vending`, `--readplan-ttl`). Default: raw with an empty
   *  storage bucket and the default TTL (presigned plans then answer FAILED_PRECONDITION). */
  vending?: ReadPlanVending;
}

export interface RunningGrpcServer {
  port: number;
  /** Ends subscriptions and sessions (clients resume from their cursors), then shuts down. */
  close(): Promise<void>;
}

function hostOf(listen: string): string {
  const i = listen.lastIndexOf(':');
  return i < 0 ? listen : listen.slice(0, i);
}

export async function startGrpcServer(opts: GrpcServerOptions): Promise<RunningGrpcServer> {
  const { proto } = loadSvcProto();
  const nowMs = opts.star?.nowMs ?? ((): number => Date.now());
  const ctx: GrpcContext = {
    service: opts.service,
    star: {
      id: opts.star?.id ?? 'star-0',
      address: opts.star?.address ?? opts.listen,
      startedAtMs: nowMs(),
      nowMs,
      ...(opts.star?.settle ? { settle: opts.star.settle.bind(opts.star) } : {}),
    },
    live: new LiveCalls(),
    vending: opts.vending ?? { mode: 'raw', ttlMs: READPLAN_TTL_MS_DEFAULT, storageBucket: '' },
    ...(opts.auth ? { auth: opts.auth } : {}),
  };

  const server = new grpc.Server({
    'grpc.max_receive_message_length': GRPC_MESSAGE_BYTES_MAX,
    'grpc.max_send_message_length': GRPC_MESSAGE_BYTES_MAX,
  });
  server.addService(proto.svc.v1.DataService.service, dataServiceHandlers(ctx));
  server.addService(proto.svc.v1.AdminService.service, adminServiceHandlers(ctx));

  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(opts.listen, opts.credentials ?? grpc.ServerCredentials.createInsecure(), (err, bound) => {
      if (err) reject(err);
      else resolve(bound);
    });
  });
  if (!opts.star?.address) ctx.star.address = `${hostOf(opts.listen)}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    port,
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        ctx.live.endAll();
        const timer = setTimeout(() => server.forceShutdown(), GRPC_SHUTDOWN_GRACE_MS);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return closing;
    },
  };
}
