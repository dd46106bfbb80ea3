// The standard gRPC health service (grpc.health.v1.Health, proto/grpc/health/v1/health.proto) and
// server reflection (grpc.reflection.v1 and v1alpha) on the star's gRPC listener. The spec is silent
// on both; gRPC users expect them: Kubernetes' gRPC probes, grpc_health_probe and meshes call
// Health/Check, and `grpcurl -plaintext host:port list` needs reflection. Both are open (no
// credential, like the bridge's /healthz) and tell nothing about any stream.
//
// A service is SERVING while the star is ready (its WAL can be written and its metadata is up: the
// ops listener's /readyz) and the server is not shutting down; NOT_SERVING otherwise. "" names the
// whole server; svc.v1.DataService and svc.v1.AdminService share its status.

import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { GRPC_HEALTH_WATCHES_MAX, GRPC_HEALTH_WATCH_POLL_MS } from '../../config/limits.ts';
import type { Timers } from '../../core/ports.ts';
import type { LiveCalls } from './context.ts';
import { LOADER_OPTIONS, PROTO_ROOT, svcProtoFiles } from './proto.ts';
import { qualifiedDescriptors, resolvedReferences } from './reflection-descriptors.ts';

export const HEALTH_SERVICE = 'grpc.health.v1.Health';
const HEALTH_PROTO_FILE = 'grpc/health/v1/health.proto';
/** Paths the admission interceptor lets in without a credential. */
export const OPEN_GRPC_PATHS: ReadonlySet<string> = new Set([
  `/${HEALTH_SERVICE}/Check`,
  `/${HEALTH_SERVICE}/Watch`,
  '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo',
  '/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo',
]);

export type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';

interface HealthCheckRequest { service: string }
interface HealthCheckResponse { status: ServingStatus }

export interface HealthOptions {
  /** The star can take appends (its WAL and metadata are up). */
  ready(): boolean;
  /** Services a caller may name besides "" (the whole server). */
  services: readonly string[];
  live: LiveCalls;
  timers: Timers;
}

/** grpc.health.v1.Health and its package definition (for reflection). */
export function loadHealthProto(): { service: grpc.ServiceDefinition; packageDefinition: protoLoader.PackageDefinition } {
  const packageDefinition = protoLoader.loadSync([HEALTH_PROTO_FILE], LOADER_OPTIONS);
  const pkg = grpc.loadPackageDefinition(packageDefinition) as unknown as { grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } } };
  return { service: pkg.grpc.health.v1.Health.service, packageDefinition };
}

/** Handlers for Check and Watch. Watchers are bounded (GRPC_HEALTH_WATCHES_MAX) and share one poll of
 *  the status, running only while someone watches; shutdown ends them with NOT_SERVING. */
export function healthHandlers(o: HealthOptions): grpc.UntypedServiceImplementation {
  const known = new Set(['', ...o.services]);
  const statusNow = (): ServingStatus => (!o.live.isClosing && o.ready() ? 'SERVING' : 'NOT_SERVING');
  /** Open Watch calls, and the ones on a known service (told of changes). */
  let watches = 0;
  const watchers = new Set<(s: ServingStatus) => void>();
  let poll: { cancel(): void } | undefined;
  let last: ServingStatus = 'UNKNOWN';
  const tick = (): void => {
    const now = statusNow();
    if (now === last) return;
    last = now;
    for (const w of [...watchers]) w(now);
  };

  const check: grpc.handleUnaryCall<HealthCheckRequest, HealthCheckResponse> = (call, callback) => {
    const service = call.request.service ?? '';
    if (!known.has(service)) {
      callback({ code: grpc.status.NOT_FOUND, details: `unknown service '${service}'` });
      return;
    }
    callback(null, { status: statusNow() });
  };

  const watch: grpc.handleServerStreamingCall<HealthCheckRequest, HealthCheckResponse> = (call) => {
    const service = call.request.service ?? '';
    if (watches >= GRPC_HEALTH_WATCHES_MAX) {
      call.emit('error', { code: grpc.status.RESOURCE_EXHAUSTED, details: `at most ${GRPC_HEALTH_WATCHES_MAX} health watches at once` });
      return;
    }
    watches += 1;
    // A name the server does not know is SERVICE_UNKNOWN, and the watch stays open (the protocol lets
    // such a service appear later; none will here): it still counts against the bound and is ended
    // at shutdown like every other.
    const isKnown = known.has(service);
    let sent: ServingStatus = isKnown ? statusNow() : 'SERVICE_UNKNOWN';
    call.write({ status: sent });
    const push = (s: ServingStatus): void => {
      if (s === sent) return;
      sent = s;
      call.write({ status: s });
    };
    if (isKnown) {
      watchers.add(push);
      if (watchers.size === 1) {
        last = sent;
        poll = o.timers.setInterval(tick, GRPC_HEALTH_WATCH_POLL_MS);
      }
    }
    let ended = false;
    const stop = (): void => {
      if (ended) return;
      ended = true;
      watches -= 1;
      unregister();
      if (watchers.delete(push) && watchers.size === 0) { poll?.cancel(); poll = undefined; }
    };
    const unregister = o.live.add(() => {
      if (isKnown) push('NOT_SERVING');
      stop();
      call.end();
    });
    call.on('cancelled', stop);
    call.on('close', stop);
  };

  return { Check: check, Watch: watch };
}

/** Adds Health and reflection (v1 and v1alpha) to `server`, describing `described` and Health. */
export function addHealthAndReflection(server: grpc.Server, described: protoLoader.PackageDefinition, o: HealthOptions): void {
  const health = loadHealthProto();
  server.addService(health.service, healthHandlers(o));
  const resolved = resolvedReferences([...svcProtoFiles(), HEALTH_PROTO_FILE], PROTO_ROOT);
  new ReflectionService(qualifiedDescriptors({ ...described, ...health.packageDefinition }, resolved)).addToServer(server);
}
