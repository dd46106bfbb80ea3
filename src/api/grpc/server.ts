// startGrpcServer: binds @grpc/grpc-js on `listen` and serves svc.v1.DataService and
// svc.v1.AdminService over a StreamService. The schema is loaded at runtime from proto/.
//
//   const grpcServer = await startGrpcServer({ service, listen: '127.0.0.1:0' });
//   … grpcServer.port …
//   await grpcServer.close();

import type { AuditView, ClusterView } from './admin-reads.ts';
import * as grpc from '@grpc/grpc-js';
import { GRPC_APPEND_MESSAGE_BYTES_MAX, GRPC_KEEPALIVE_PING_MS, GRPC_SEND_MESSAGE_BYTES_MAX, GRPC_WORKER_DECODE_BYTES_MIN, READPLAN_TTL_MS_DEFAULT, SHUTDOWN_REQUESTS_WAIT_MS_MAX } from '../../config/limits.ts';
import type { Clock, Timers } from '../../core/ports.ts';
import type { StreamService } from '../../core/service-api.ts';
import { EXCHANGE_ADDRESS_THROTTLE, FailureThrottle } from '../../auth/index.ts';
import { adminServiceHandlers } from './admin-service.ts';
import { admissionInterceptor, RequestBytesBudget } from './admission.ts';
import { LiveCalls, type GrpcContext, type OffThreadDecoder } from './context.ts';
import { appendDecoders, type AppendDecoders } from './append-decode.ts';
import { dataServiceHandlers } from './data-service.ts';
import { addHealthAndReflection } from './health.ts';
import type { GrpcAuthHooks, GrpcStarHooks, ReadPlanVending } from './hooks.ts';
import { loadSvcProto, type SvcProto } from './proto.ts';
import { stamped } from '../../log-line.ts';
import { routeGrpcLog } from './log.ts';
import { advertiseHeaderListLimit, keepaliveOptions, spareClosingSessions } from './transport.ts';

/** Largest request message: a full append batch (limits.ts: GRPC_APPEND_MESSAGE_BYTES_MAX). Clients
 *  size their send limit by it; the server refuses a longer one from its head, before reading it. */
export const GRPC_MESSAGE_BYTES_MAX = GRPC_APPEND_MESSAGE_BYTES_MAX;
/** How long close() waits for in-flight calls before cutting every connection: the HTTP drain's bound
 *  (SHUTDOWN_REQUESTS_WAIT_MS_MAX), and the two run side by side (server.ts). */
export const GRPC_SHUTDOWN_GRACE_MS = SHUTDOWN_REQUESTS_WAIT_MS_MAX;

export interface GrpcServerOptions {
  service: StreamService;
  cluster?: ClusterView;
  /** The star's auditor queues (ListAuditQueues, PeekAuditQueue). */
  audit?: AuditView;
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
  /** Request bytes in flight (admission.ts). Default: a budget of this server's own; a composition
   *  root may pass one it shares with the HTTP bridge's body budget. */
  budget?: RequestBytesBudget;
  /** Producer sessions open at once (default APPEND_SESSIONS_PER_STAR_MAX; a test passes fewer). */
  sessionsMax?: number;
  /** The clock and timers producer sessions run on. Default: the system's (the composition root
   *  passes the star's own). */
  clock?: Clock;
  timers?: Timers;
  /** The star can take appends (grpc.health.v1 answers SERVING): the ops listener's /readyz rule.
   *  Default: always. */
  ready?: () => boolean;
  /** Told of every call once its status is sent (/metrics): its method, status code and seconds. */
  observe?: (method: string, code: string, seconds: number) => void;
  /** Decodes, checks and encodes an append message's records on a parse worker: messages of at least
   *  GRPC_WORKER_DECODE_BYTES_MIN go there. Absent: every message is decoded on the event loop. */
  decodeOffThread?: OffThreadDecoder;
  /** The keepalive PING period (--grpc-keepalive-ms); default GRPC_KEEPALIVE_PING_MS. */
  keepaliveMs?: number;
}

/** Status code names by number, for /metrics labels (grpc.status is a numeric enum). */
const STATUS_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(grpc.status).filter(([, v]) => typeof v === 'number').map(([k, v]) => [v, k]),
);

/** Reports each call's method (its name, not the service's path), code and duration once the server
 *  sends its status. The method label is bounded: grpc-js answers a path no service serves itself,
 *  before any interceptor. A call the client cancels (how most subscriptions end) sends no status
 *  and is not counted. */
function observingInterceptor(observe: (method: string, code: string, seconds: number) => void): grpc.ServerInterceptor {
  return (method, call) => {
    const t0 = performance.now();
    const name = method.path.slice(method.path.lastIndexOf('/') + 1);
    return new grpc.ServerInterceptingCall(call, {
      sendStatus(status, next) {
        observe(name, STATUS_NAMES[status.code] ?? String(status.code), (performance.now() - t0) / 1000);
        next(status);
      },
    });
  };
}

const SYSTEM_CLOCK: Clock = { nowMs: () => Date.now() };
const SYSTEM_TIMERS: Timers = {
  setTimeout: (fn, ms) => { const t = setTimeout(fn, ms); return { cancel: () => clearTimeout(t) }; },
  setInterval: (fn, ms) => { const t = setInterval(fn, ms); return { cancel: () => clearInterval(t) }; },
  defer: (fn) => { setImmediate(fn); },
};

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
  const { proto, packageDefinition } = loadSvcProto();
  const nowMs = opts.star?.nowMs ?? ((): number => Date.now());
  const ctx: GrpcContext = {
    service: opts.service,
    clock: opts.clock ?? SYSTEM_CLOCK,
    timers: opts.timers ?? SYSTEM_TIMERS,
    ...(opts.cluster ? { cluster: opts.cluster } : {}),
    ...(opts.audit ? { audit: opts.audit } : {}),
    star: {
      id: opts.star?.id ?? 'star-0',
      address: opts.star?.address ?? opts.listen,
      startedAtMs: nowMs(),
      nowMs,
      ...(opts.star?.settle ? { settle: opts.star.settle.bind(opts.star) } : {}),
    },
    live: new LiveCalls(opts.sessionsMax),
    vending: opts.vending ?? { mode: 'raw', ttlMs: READPLAN_TTL_MS_DEFAULT, storageBucket: '' },
    ...(opts.auth ? { auth: opts.auth } : {}),
    ...(opts.decodeOffThread ? { decodeOffThread: opts.decodeOffThread } : {}),
  };

  // Every call passes admission first (admission.ts): its caller is authenticated from the head and
  // each message is charged to the star's and its tenant's budget before its body is buffered.
  const budget = opts.budget ?? new RequestBytesBudget();
  const admission = admissionInterceptor(ctx, {
    budget,
    exchangeThrottle: new FailureThrottle(EXCHANGE_ADDRESS_THROTTLE),
    logBug: (msg) => console.error(stamped(msg)),
    logPeerCall: (line) => console.error(stamped(line)),
  });
  routeGrpcLog((line) => console.error(stamped(line)));
  const server = new grpc.Server({
    'grpc.max_receive_message_length': GRPC_APPEND_MESSAGE_BYTES_MAX,
    'grpc.max_send_message_length': GRPC_SEND_MESSAGE_BYTES_MAX,
    ...keepaliveOptions(opts.keepaliveMs ?? GRPC_KEEPALIVE_PING_MS),
    interceptors: opts.observe ? [observingInterceptor(opts.observe), admission] : [admission],
  });
  const decoders = appendDecoders(opts.decodeOffThread ? GRPC_WORKER_DECODE_BYTES_MIN : undefined);
  server.addService(withAppendDecoders(proto.svc.v1.DataService.service, decoders), dataServiceHandlers(ctx));
  server.addService(proto.svc.v1.AdminService.service, adminServiceHandlers(ctx));
  addHealthAndReflection(server, packageDefinition, {
    ready: opts.ready ?? ((): boolean => true),
    services: ['svc.v1.DataService', 'svc.v1.AdminService'],
    live: ctx.live,
    timers: ctx.timers,
  });

  advertiseHeaderListLimit(server);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(opts.listen, opts.credentials ?? grpc.ServerCredentials.createInsecure(), (err, bound) => {
      if (err) reject(err);
      else resolve(bound);
    });
  });
  spareClosingSessions(server);
  if (!opts.star?.address) ctx.star.address = `${hostOf(opts.listen)}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    port,
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        ctx.live.endAll();
        // Past the grace every call is cut, and the close does not wait for the sockets to finish:
        // grpc-js's callback waits for each session to close, and Node's http2 closes a destroyed
        // session's socket with end(), which waits for the peer to read what is buffered. A client
        // that stopped reading (a frozen process under a subscription) would hold the star's stop
        // forever. The process exits after its stop; an in-process caller's clients close theirs.
        const timer = setTimeout(() => { server.forceShutdown(); resolve(); }, GRPC_SHUTDOWN_GRACE_MS);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return closing;
    },
  };
}

/** DataService with the append requests read by append-decode.ts rather than protobufjs (the same
 *  shapes, several times faster, and large ones left for a parse worker). */
function withAppendDecoders(def: SvcProto['svc']['v1']['DataService']['service'], decoders: AppendDecoders): SvcProto['svc']['v1']['DataService']['service'] {
  return {
    ...def,
    Append: { ...def.Append, requestDeserialize: decoders.append },
    AppendSession: { ...def.AppendSession, requestDeserialize: decoders.session },
  };
}
