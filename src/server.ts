// The composition root: recover metadata and the WAL, start the flusher and the worker pool, build
// the star, and serve the route table over uWS (or node:http when uWS cannot load), the gRPC planes
// and the ops listener. src/main.ts is the CLI around it; tests build stars through it too.

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { join, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import { STAR_ID_PATTERN, type Config } from './config/config.ts';
import { LOG_RING_BYTES, POSTGRES_BOOT_RETRY_MS, POSTGRES_BOOT_WAIT_MS_MAX, PROXY_HEAD_MS_MAX, S3_BOOT_WAIT_MS_MAX, SHUTDOWN_CONNECTION_GRACE_MS, SHUTDOWN_REQUESTS_WAIT_MS_MAX, WAL_FLUSHER_START_MS_MAX, WAL_HEALTH_SAMPLE_MS } from './config/limits.ts';
import { Star } from './core/star.ts';
import { ERROR_TABLE, ServiceError } from './core/errors.ts';
import type { AppendInput, EncodedBatch } from './core/types.ts';
import type { SegmentChecker, SegmentSettler } from './core/ports.ts';
import { Dispatcher } from './api/dispatch.ts';
import { loadNativeUws, startUwsServer } from './api/uws.ts';
import { DsSurface } from './api/ds/surface.ts';
import { DS_HOP_HEADERS } from './api/ds/headers.ts';
import { LeaderProxy, inHop, unreachableStar } from './api/proxy.ts';
import { CorsPolicy } from './api/cors.ts';
import { startNodeServer } from '../native-free/http-node.ts';
import { frameTimestamps, forEachRecord, contentBytes } from './storage/format/record-codec.ts';
import { openMetadataStore } from './storage/metadata/open-store.ts';
import { PostgresMetadataStore } from './storage/metadata/postgres-store.ts';
import { PostgresCluster } from './storage/metadata/postgres-cluster.ts';
import type { MetadataStore } from './storage/metadata/metadata-store.ts';
import { ClusterCommitLog } from './cluster/commit-log.ts';
import { ClusterService } from './cluster/cluster-service.ts';
import { MemorySettler } from './cluster/mem-settler.ts';
import { createPeerClient, type PeerClient } from './cluster/peer-client.ts';
import type { StreamService } from './core/service-api.ts';
import { soleLeadership, type Leadership, type LogPort } from './core/ports.ts';
import type { ObjectStoreConfig } from './storage/objects/object-store.ts';
import { openObjectStore } from './storage/objects/open-store.ts';
import { S3ObjectStore } from './storage/objects/s3-store.ts';
import { checkStoredFormat } from './storage/stored-format.ts';
import { starIdOf } from './storage/star-id.ts';
import { TrackedObjectStore } from './storage/objects/tracked-store.ts';
import { DependencyHealth } from './storage/dependency-health.ts';
import { createRingBuffers, LogRingWriter } from './storage/wal/log-ring.ts';
import { recoverWal, removeWalFile } from './storage/wal/wal-files.ts';
import { createPool, PoolSegmentChecker, PoolSettler, poolSettleBytes } from './workers/pool.ts';
import type { GrpcAppendTask, ParseResult } from './workers/parse-task.ts';
import type { GrpcAppendMessage } from './api/grpc/append-decode.ts';
import { AUTH_SETTINGS, parseAuthConfig, startAuth, type AuthModule } from './auth/index.ts';
import { credentialStoreOf } from './credential-store.ts';
import { lockDataDir } from './storage/data-dir-lock.ts';
import { makeDir } from './storage/make-dir.ts';
import { Lifecycle, reasonOf, refusedAs } from './lifecycle.ts';
import { waitAtBoot } from './config/boot-error.ts';
import { tlsFilesOf } from './config/tls-files.ts';
import { hostPort, hostPortText } from './config/flags.ts';
import type { FlagSpec } from './config/config.ts';
import { startGrpcServer } from './api/grpc/server.ts';
import { Metrics } from './ops/metrics.ts';
import { startHeapTrimmer } from './ops/heap-trim.ts';
import { startOpsServer } from './ops/ops-server.ts';
import { adminSurface } from './ops/admin-routes.ts';
import type { GrpcAuthHooks, ReadPlanVending } from './api/grpc/hooks.ts';
import { authorize, checkFencingPin, type Operation } from './auth/index.ts';
import { bridgeBaseUrl, loadPresignSecret, Presigner } from './api/presign.ts';
import { stamped } from './log-line.ts';

/** Auth settings as CLI flags (environment-only secrets appear in --help but not in argv). */
export const AUTH_FLAGS: FlagSpec[] = AUTH_SETTINGS.map((a) => ({
  name: a.flag ?? '', env: a.env, help: a.help, boolean: a.boolean, envOnly: a.flag === undefined,
}));


/** Worker entries, resolved here (src/). The built main (src/main.bundle.mjs, beside this file)
 *  starts the worker bundles the same build wrote beside it; run from the TypeScript sources, the
 *  workers start from small .mjs entries that register tsx first (scripts/build.mjs). */
const BUILT = import.meta.url.endsWith('.bundle.mjs');
const WORKER_ENTRY = new URL(BUILT ? './tasks.bundle.mjs' : './workers/boot.mjs', import.meta.url);
const FLUSHER_ENTRY = new URL(BUILT ? './flusher.bundle.mjs' : './storage/wal/flusher-boot.mjs', import.meta.url);

/** Worker threads start from the bundles or from entries that register the TypeScript loader
 *  themselves, so they inherit no --import flags (which would resolve against the caller's directory). */
function workerExecArgv(): string[] {
  return [];
}

/** host:port/db of a PostgreSQL URL, never its user or password (for messages). */
function postgresTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.host}${u.pathname}`;
  } catch {
    return '(unparsable)';
  }
}

export function logError(msg: string, err?: unknown): void {
  console.error(stamped(`svcd: ${msg}${err ? `: ${err instanceof Error ? err.stack ?? err.message : String(err)}` : ''}`));
}

export interface RunningStar {
  star: Star;
  /** A cluster (--metadata postgres): the service every transport calls, over `star`. */
  cluster?: ClusterService;
  port: number;
  engine: string;
  /** The data bridge serves TLS. */
  tls: boolean;
  grpcPort?: number;
  opsPort?: number;
  stop(): Promise<void>;
}

/** Starts a star: every part in dependency order, each registered with its stop phase (lifecycle.ts),
 *  so stop() and a boot that fails part-way both stop in one order. */
export async function startStar(cfg: Config): Promise<RunningStar> {
  const life = new Lifecycle(logError);
  return life.boot(() => composeStar(cfg, life));
}

async function composeStar(cfg: Config, life: Lifecycle): Promise<RunningStar> {
  const dataDir = resolve(cfg.dataDir);
  const walDir = join(dataDir, 'wal');
  const objectsDir = join(dataDir, 'objects');
  makeDir(walDir);
  makeDir(objectsDir);
  const lock = lockDataDir(dataDir);
  life.started('data dir lock', 'data-dir', () => lock.release());
  // The one identity of this star: its lease rows, membership row, tokens and admin views all use it.
  const starId = starIdOf(dataDir, cfg.starId, STAR_ID_PATTERN);
  const startedAtMs = Date.now();

  // Settled segments: the data dir's objects/ or an S3 bucket, which must answer before anything starts.
  const storeCfg: ObjectStoreConfig = cfg.objectStore.backend === 's3' ? cfg.objectStore : { backend: 'fs', dir: objectsDir };
  const rawObjects = openObjectStore(storeCfg);
  const s3 = rawObjects instanceof S3ObjectStore ? rawObjects : undefined;
  if (s3) {
    life.started('object store client', 'stores', () => s3.close());
    await s3.check(S3_BOOT_WAIT_MS_MAX, (why) => console.error(`svcd: ${why}; waiting up to ${S3_BOOT_WAIT_MS_MAX / 1000} s for it`));
  }
  // What the star depends on, each up or down with one log line per outage and its /metrics series.
  const logLine = (line: string): void => { console.error(stamped(`svcd: ${line}`)); };
  const health = {
    metadata: new DependencyHealth(`metadata store (${cfg.metadata.backend})`, logLine),
    wal: new DependencyHealth('WAL disk', undefined), // the flusher logs its own outages
    objects: new DependencyHealth(`object store (${storeCfg.backend})`, logLine),
  };
  const objects = new TrackedObjectStore(rawObjects, health.objects);

  // PostgreSQL metadata makes this star one of a cluster (of one, alone): stream writes are guarded by
  // its leases, and appends commit to object storage and PostgreSQL instead of the local WAL.
  let cluster: ClusterService | undefined;
  const clusterCfg = cfg.metadata.backend === 'postgres' ? cfg.metadata : undefined;
  // One leadership for the star's acks and the store's guarded writes: the cluster's leases, or (a
  // star alone) every stream at epoch 0.
  let pgCluster: PostgresCluster | undefined; // made below, once the metadata store has loaded
  const leadership: Leadership = clusterCfg ? { epochOf: (bucket, key) => cluster?.epochOf(bucket, key) } : soleLeadership;
  const pgMetadata = clusterCfg
    ? new PostgresMetadataStore({
      url: clusterCfg.url, schema: clusterCfg.schema, health: health.metadata,
      leaseGuard: { holder: starId, epochOf: (bucket, key) => leadership.epochOf(bucket, key) },
      // The cluster's pool (made below): a star whose commits or leases hang is not ready either, and
      // a connection found dead on either side makes the other start afresh.
      alsoHealthy: () => pgCluster?.healthy() ?? true,
      onConnectionLost: () => pgCluster?.dropConnections(),
    })
    : undefined;
  const metadata: MetadataStore = pgMetadata ?? openMetadataStore(cfg.metadata, dataDir, health.metadata);
  life.started('metadata store', 'stores', () => metadata.close());
  // PostgreSQL away or its database missing is the operator's to fix: one line, not a stack.
  const pgAway = clusterCfg ? `metadata: PostgreSQL (--postgres-url ${postgresTarget(clusterCfg.url)}) did not answer` : '';
  const state = clusterCfg
    ? await refusedAs(pgAway, () => waitAtBoot(
      () => metadata.load(),
      (err) => pgMetadata?.loadFailureIsTemporary(err) ?? false,
      { waitMs: POSTGRES_BOOT_WAIT_MS_MAX, retryMs: POSTGRES_BOOT_RETRY_MS },
      (err) => console.error(`svcd: ${pgAway}: ${reasonOf(err)}; waiting up to ${POSTGRES_BOOT_WAIT_MS_MAX / 1000} s for it`)))
    : await metadata.load();
  await checkStoredFormat(state, metadata, objects, () => randomUUID(), Date.now());
  const get = (f: string): string | undefined => cfg.raw.get(f) || undefined;
  const tls = tlsFilesOf(get);
  const authConfig = parseAuthConfig(get, process.env, tls !== undefined);
  if (tls?.ca !== undefined && authConfig.mode !== 'mtls') console.error('svcd: --tls-client-ca is used only by --auth mtls; ignored');
  const auth: AuthModule | undefined = authConfig.mode === 'off'
    ? undefined
    : await startAuth(authConfig, { store: credentialStoreOf(metadata), starId, log: (m: string) => console.error(`svcd auth: ${m}`) });
  if (auth) life.started('auth', 'requests', () => auth.close());
  const parsePool = createPool('parse', WORKER_ENTRY, workerExecArgv());
  const settlePool = createPool('settle', WORKER_ENTRY, workerExecArgv());
  life.started('worker pools', 'workers', () => Promise.all([parsePool.destroy(), settlePool.destroy()]));
  const timers = {
    setTimeout: (fn: () => void, ms: number) => { const t = setTimeout(fn, ms); return { cancel: () => clearTimeout(t) }; },
    setInterval: (fn: () => void, ms: number) => { const t = setInterval(fn, ms); t.unref(); return { cancel: () => clearInterval(t) }; },
    defer: (fn: () => void) => { setImmediate(fn); },
  };
  const clock = { nowMs: () => Date.now() };
  const recovered: Parameters<Star['open']>[1] extends Iterable<infer T> ? T[] : never = [];
  let walFiles: number[] = [];
  let walFileNo = 1;
  let log: LogPort;
  let wal: { stop(): Promise<void>; failed(): boolean; failureCause(): string };
  let settler: SegmentSettler;
  let removeFile: (n: number) => void = () => undefined;
  /** Resolves once the log can take appends without waiting for its thread to start. */
  let logReady: Promise<void> = Promise.resolve();
  let expressObjects: TrackedObjectStore | undefined;
  // Assigned once the star exists (the cluster's settler reads its frames).
  const starRef: { star?: Star } = {};
  if (clusterCfg) {
    const pg = new PostgresCluster(clusterCfg.url, clusterCfg.schema, starId, () => pgMetadata?.dropConnection('a cluster statement found its connection dead'));
    pgCluster = pg;
    life.started('cluster membership client', 'stores', () => pg.close());
    // Express-class chunks go to the express bucket (S3 Express One Zone in production), beside the
    // main one; on fs there is one directory and they share it.
    if (cfg.objectStore.backend === 's3' && cfg.expressBucket) {
      const raw = new S3ObjectStore({ ...cfg.objectStore, bucket: cfg.expressBucket });
      life.started('express bucket client', 'stores', () => raw.close());
      expressObjects = new TrackedObjectStore(raw, health.objects);
    }
    const commitLog = new ClusterCommitLog({
      starId, objects, pg: pgCluster, ...(expressObjects ? { express: expressObjects } : {}), timers, leaseTtlMs: cfg.leaseTtlMs, lingerMs: cfg.commitLingerMs, incarnation: `${startedAtMs.toString(36)}-${randomUUID().slice(0, 8)}`,
      leaderOf: (id) => cluster?.leaderOf(id), log_error: logError,
    });
    log = commitLog;
    wal = { stop: () => commitLog.stop(), failed: () => false, failureCause: () => '' };
    life.started('commit log', 'log', () => commitLog.stop());
    settler = trackSettler(new MemorySettler(poolSettleBytes(settlePool, storeCfg), (id, gen, from) => starRef.star?.framesOf(id, gen, from) ?? []), health.objects);
  } else {
    const local = startLocalWal(walDir, recovered);
    life.started('WAL flusher', 'log', () => local.stop());
    ({ walFiles, walFileNo } = local);
    log = local.log;
    logReady = local.ready;
    wal = local;
    settler = trackSettler(new PoolSettler(settlePool, storeCfg, walDir), health.objects);
    removeFile = (n) => { void removeWalFile(walDir, n); };
  }
  const star = new Star({
    clock,
    timers,
    ids: { uuid: () => randomUUID() },
    log,
    leadership,
    metadata,
    objects,
    settler,
    segmentChecker: trackChecker(new PoolSegmentChecker(settlePool, storeCfg), health.objects),
    wal: { removeFile },
    walFileNo,
    readRecordsMax: cfg.maxReadRecords,
    walFileBytesMax: cfg.wal.fileBytesMax,
    walSettleAfterMs: cfg.wal.settleAfterMs,
    readBytesMax: cfg.maxReadBytes,
    log_error: logError,
    expressBucket: cfg.expressBucket,
    starId,
    leaseIdleMs: cfg.leaseIdleMs,
    // A star alone: an idle stream goes dormant when it goes vacant. In a cluster the leadership
    // lets idle streams go instead (ClusterService.releaseIdle).
    ...(clusterCfg ? {} : { dormantAfterMs: cfg.leaseIdleMs }),
    objectGraceMs: cfg.readGraceMs,
    auditScrubMs: cfg.auditScrubMs,
    onEvicted: (bucket, key) => cluster?.evicted(bucket, key),
  });
  starRef.star = star;
  star.open(state, recovered, walFiles);
  life.started('star', 'core', () => star.close());
  // Peers are reached on their gRPC address, under this star's own auth mode and transport; a star
  // without a gRPC listener has no peer calls to make (its peers settle as they drain).
  const peerClient: PeerClient | undefined = clusterCfg && cfg.grpcListen
    ? createPeerClient({ tls, credentials: auth?.peer })
    : undefined;
  if (peerClient) life.started('peer client', 'leadership', () => peerClient.close());
  if (clusterCfg && pgCluster) {
    cluster = new ClusterService({
      ...(peerClient ? { settlePeer: (row) => (row.grpc_address === '' ? Promise.resolve() : peerClient.settle(row)) } : {}),
      star, pg: pgCluster, metadata: metadata as PostgresMetadataStore, objects, objectsHealth: health.objects, ...(expressObjects ? { express: expressObjects } : {}), log: log as ClusterCommitLog, starId, clock, timers,
      leaseTtlMs: cfg.leaseTtlMs, leaseIdleMs: cfg.leaseIdleMs, unsettledSweepMs: cfg.unsettledSweepMs, log_error: logError, inHop, unreachable: unreachableStar,
    });
    // Leases are given up once the star has closed (its in-flight appends answered), not before.
    const c = cluster;
    life.started('leadership', 'leadership', () => c.stop());
  }
  const svc: StreamService = cluster ?? star;

  const workerDecodes = { http: 0, grpc: 0 };
  const parseQueueFull = (): boolean => parsePool.queueSize >= parsePool.options.maxQueue;
  const parseOnWorker = async (task: Buffer | GrpcAppendTask, name: 'parseAppend' | 'parseGrpcAppend', signal?: AbortSignal): Promise<AppendInput> => {
    workerDecodes[name === 'parseAppend' ? 'http' : 'grpc']++;
    let r: ParseResult;
    try {
      // A cancelled call's task leaves the queue (and its message with it).
      r = (await parsePool.run(task, { name, ...(signal ? { signal } : {}) })) as ParseResult;
    } catch (err) {
      // A worker that died, a pool destroyed at shutdown, a call cancelled: nothing was appended.
      throw new ServiceError('unavailable', signal?.aborted ? 'the call ended while its batch was being parsed' : `the batch could not be parsed (${err instanceof Error ? err.message : String(err)}); retry`);
    }
    if (!r.ok) throw new ServiceError(ERROR_TABLE[r.code] ? r.code : 'invalid_argument', r.message);
    const p = r.parsed;
    const input: AppendInput = {
      records: [],
      encoded: { frame: Buffer.from(p.frame.buffer, p.frame.byteOffset, p.frame.length), recordOffsets: p.recordOffsets, clientTs: p.clientTs, contentBytes: p.contentBytes },
    };
    if (p.match_seq_num !== undefined) input.match_seq_num = p.match_seq_num;
    if (p.fencing_token !== undefined) input.fencing_token = p.fencing_token;
    return input;
  };
  const parseOffThread = (body: Buffer): Promise<AppendInput> => {
    // The bounded queue is full: push the producer back rather than buffer without limit.
    if (parseQueueFull()) throw new ServiceError('resource_exhausted', 'too many large appends being parsed; retry shortly');
    return parseOnWorker(body, 'parseAppend');
  };
  // gRPC's message is buffered already (admission charged it): with the queue full, the caller
  // decides (api/grpc/context.ts batchFromWire).
  const decodeOffThread = (bytes: Buffer, message: GrpcAppendMessage, signal: AbortSignal): Promise<EncodedBatch> | undefined =>
    (parseQueueFull() ? undefined : parseOnWorker({ bytes, message }, 'parseGrpcAppend', signal).then((input) => input.encoded!));
  // The WAL's outages are the flusher's (it logs them); sampled here for /metrics.
  const walWatch = setInterval(() => {
    if (wal.failed()) { if (health.wal.up) health.wal.failed(wal.failureCause()); } else health.wal.succeeded();
  }, WAL_HEALTH_SAMPLE_MS);
  walWatch.unref();
  life.started('WAL health sampling', 'listeners', () => clearInterval(walWatch));
  const metrics = new Metrics(
    { sseOpen: () => dispatcher.openStreams, bodyBytesInFlight: () => dispatcher.requestBodyBytesInFlight },
    () => [health.metadata, health.wal, health.objects],
  );
  metrics.audit(star.auditor);
  const heapTrimmer = startHeapTrimmer({
    logEnd: () => star.logEnd, retired: () => star.dormancy.retired, log: (line) => console.log(line), logError,
  });
  life.started('heap trimmer', 'listeners', heapTrimmer.stop);
  metrics.heapTrims(heapTrimmer.counters);
  metrics.workerDecodes(workerDecodes);
  metrics.streams({ live: () => star.liveStreams, dormant: () => star.dormantStreams, counters: star.dormancy });
  // Hops go over TLS when the bridges serve it; under mtls with this star's own certificate, which
  // the leader's listener verifies against the same --tls-client-ca (the gRPC peer client's rule).
  const hopTls = tls && {
    ...(tls.ca !== undefined && authConfig.mode === 'mtls' ? { ca: readFileSync(tls.ca) } : {}),
    ...(authConfig.mode === 'mtls' ? { cert: readFileSync(tls.cert), key: readFileSync(tls.key) } : {}),
  };
  const proxy = cluster ? new LeaderProxy(starId, (id) => cluster.starGone(id), hopTls, cfg.sse.stallMs) : undefined;
  if (proxy) life.started('leader proxy', 'leadership', () => proxy.close());
  if (cluster && proxy && log instanceof ClusterCommitLog) {
    const c = cluster;
    log.onCommit = metrics.cluster(() => ({ ...c.counters, leasesHeld: c.leasesHeld, proxyHops: proxy.hops, proxyFailures: proxy.failures, steppedAside: c.steppedAside }));
  }
  const exchange = auth?.verifier?.signer ? (body: unknown) => auth.exchanger.exchange(body) : undefined;
  const dispatcher = new Dispatcher({
    svc, parseOffThread, logError, sse: cfg.sse, bodyBudget: cfg.bodyBudget,
    observe: (verb, status, secs) => metrics.observe(verb, status, secs),
    auth: auth ? { authenticator: auth.authenticator, exchange } : undefined,
    cors: new CorsPolicy(cfg.corsAllowedOrigins),
    ...(proxy ? { proxy } : {}),
    ds: cfg.ds.enabled ? new DsSurface({
      svc, bucket: cfg.ds.bucket, longPollMs: cfg.ds.longPollMs, sseStallMs: cfg.sse.stallMs, scheme: tls ? 'https' : 'http', logError,
      ...(auth ? { authenticator: auth.authenticator } : {}),
      // A hopped long-poll answers only at its timeout when nothing comes: the hop waits that long more.
      ...(proxy ? {
        hop: (ex, body, leader, base, live) => proxy.forward(ex, body, leader, {
          answerHeaders: base, carried: DS_HOP_HEADERS, headMsMax: cfg.ds.longPollMs + PROXY_HEAD_MS_MAX, live,
        }),
      } : {}),
    }) : undefined,
  });

  let engine: string = cfg.httpEngine;
  let server: { port: number; close(): void; closeConnections(): void } | undefined;
  await logReady;
  if (cfg.listen) {
    // uWS cannot report whether a client certificate verified, so mtls is served by node:https.
    if (cfg.httpEngine === 'uws' && authConfig.mode !== 'mtls') {
      const loaded = loadNativeUws();
      if ('uws' in loaded) server = await startUwsServer(loaded.uws, cfg.listen.host, cfg.listen.port, dispatcher, tls);
      else {
        console.error(`svcd: ${loaded.error}; serving with node:http (native-free/)`);
        engine = 'node';
      }
    }
    if (!server && authConfig.mode === 'mtls') engine = 'node';
    server ??= await startNodeServer(cfg.listen.host, cfg.listen.port, dispatcher, tls && { ...tls, requestCert: authConfig.mode === 'mtls' });
    const bridge = server;
    life.started('data bridge listener', 'listeners', () => bridge.close());
  }
  // A stopping star answers the requests already on their way before the log and the core stop; its
  // event streams and DS waits at a tail end first (they would never end by themselves), and the
  // connections left close once the rest is answered or SHUTDOWN_REQUESTS_WAIT_MS_MAX has passed.
  // The gRPC plane's calls are waited for beside them (its close has the same bound), so the drain
  // as a whole stays within one bound rather than one per plane.
  const bridgeServer = server;
  const otherPlanesDrained: (() => Promise<void>)[] = [];
  life.started('requests in flight', 'requests', async () => {
    const bridgeDrained = async (): Promise<void> => {
      const deadline = Date.now() + SHUTDOWN_REQUESTS_WAIT_MS_MAX;
      dispatcher.endStreams();
      await dispatcher.whenIdle(SHUTDOWN_REQUESTS_WAIT_MS_MAX);
      // Clients between two requests get their next one answered (closing its connection) first.
      await new Promise((r) => setTimeout(r, Math.max(0, Math.min(SHUTDOWN_CONNECTION_GRACE_MS, deadline - Date.now()))));
      await dispatcher.whenIdle(Math.max(0, deadline - Date.now()));
      bridgeServer?.closeConnections();
    };
    await Promise.all([bridgeDrained(), ...otherPlanesDrained.map((drained) => drained())]);
  });
  const presigner = server && cfg.listen ? new Presigner(loadPresignSecret(dataDir), bridgeBaseUrl(cfg.listen.host, server.port, tls !== undefined)) : undefined;
  // ReadPlan's presigned URLs: S3 signs its own; on fs the data bridge serves what the star signed.
  dispatcher.vendObjects(presigner && !s3 ? { presigner, objects, nowMs: () => Date.now() } : undefined);
  const vending: ReadPlanVending = {
    mode: cfg.readplanVending, ttlMs: cfg.readplanTtlMs, storageBucket: s3 ? s3.bucket : objectsDir,
    ...(s3
      ? { presign: (o: { objectKey: string; expiresAtMs: number }) => s3.presignGet(o.objectKey, o.expiresAtMs, Date.now()) }
      : presigner ? { presign: presigner.url.bind(presigner) } : {}),
  };
  // Not ready while appends would be refused: the WAL cannot be written, or the metadata store is
  // away (or a row write's outcome is still being read back). /readyz and grpc.health.v1 answer it.
  // A stopping star is not ready from its first step: a balancer polling /readyz while it drains sees
  // 503 and sends nothing new.
  let draining = false; // set first thing when the star stops (registered last below)
  const starReady = (): boolean => !draining && !wal.failed() && star.metadataReady();
  dispatcher.readiness(starReady);
  const grpcListen = cfg.grpcListen;
  const grpcServer = grpcListen
    ? await refusedAs(`cannot listen on ${hostPortText(grpcListen.host, grpcListen.port)} (gRPC)`, () => startGrpcServer({
      ...(cluster ? { cluster: cluster.view() } : {}),
      audit: star.auditor,
      service: svc, clock, timers, listen: hostPortText(grpcListen.host, grpcListen.port), vending, decodeOffThread, star: { id: starId, ...(cfg.advertiseAddress ? { address: cfg.advertiseAddress } : {}), settle: () => star.settle() },
      auth: grpcAuthHooks(auth, { clientCertVerified: authConfig.mode === 'mtls' }),
      ...(tls ? { credentials: grpcTlsCredentials(tls, authConfig.mode === 'mtls') } : {}),
      ready: starReady,
      keepaliveMs: cfg.grpcKeepaliveMs,
      observe: (method, code, secs) => metrics.observeGrpc(method, code, secs),
    }))
    : undefined;
  // The gRPC close starts with the other listeners (no new calls, subscriptions and sessions ended)
  // and is waited for with the HTTP requests.
  if (grpcServer) {
    life.started('gRPC listener', 'listeners', () => { void grpcServer.close(); });
    otherPlanesDrained.push(() => grpcServer.close());
  }
  /** Where other stars and ListStars reach this one: --advertise-address, else the gRPC listener. */
  const advertisedAddress = (): string => cfg.advertiseAddress || (grpcServer ? hostPortText(cfg.grpcListen!.host, grpcServer.port) : '');
  const opsListen = cfg.metricsListen;
  const ops = opsListen
    ? await refusedAs(`cannot listen on ${hostPortText(opsListen.host, opsListen.port)} (ops)`, () => startOpsServer(opsListen.host, opsListen.port, {
      metrics, allowedHosts: cfg.opsAllowedHosts,
      ready: starReady,
      extra: adminSurface({
        ui: cfg.adminUi, reader: cfg.adminUiReader, logError, service: svc, audit: star.auditor, ...(cluster ? { cluster: cluster.view() } : {}),
        // The star as the gRPC admin plane names it (startGrpcServer's default id, its bound address).
        star: { id: starId, address: advertisedAddress(), startedAtMs, nowMs: () => Date.now() },
        listCredentials: grpcAuthHooks(auth, { clientCertVerified: false })?.listCredentials,
      }),
    }))
    : undefined;
  // The ops listener stays up through the drain (phase 'requests'), so /readyz can say 503 meanwhile
  // and /metrics shows the drain; it closes when the log stops.
  if (ops) life.started('ops listener', 'log', () => ops.close());
  // Registered after every listener, so it runs first when they stop (a phase stops in reverse).
  life.started('readiness', 'listeners', () => { draining = true; });
  // A cluster's membership row: where the other stars reach this one (its bridge for the one-hop
  // proxy, its gRPC address for NOT_OWNER). Leadership starts once the star is reachable.
  if (cluster && pgCluster) {
    const bridge = cfg.listen && server ? bridgeAdvertised(cfg.listen.host, server.port, cfg.advertiseBridgeAddress, cfg.advertiseAddress) : '';
    await pgCluster.join(bridge, advertisedAddress(), startedAtMs);
    cluster.start();
  }

  return {
    star,
    cluster,
    port: server?.port ?? 0,
    engine,
    tls: tls !== undefined,
    grpcPort: grpcServer?.port,
    opsPort: ops?.port,
    stop: () => life.stop(),
  };
}

/** The embedded default's commit path: the WAL recovered into `recovered`, a flusher thread that
 *  group-commits the log ring to it, and the ring's writer. */
function startLocalWal(
  walDir: string,
  recovered: { fileNo: number; streamId: string; firstSeq: number; count: number; frame: Buffer; timestamps: number[]; contentBytes: number }[],
): { log: LogRingWriter; walFiles: number[]; walFileNo: number; ready: Promise<void>; stop(): Promise<void>; failed(): boolean; failureCause(): string } {
  const { files: walFiles, lastFileNo, cutBytes } = recoverWal(walDir, (f) => {
    let content = 0;
    forEachRecord(f.frame, 0, 0, (r) => { content += contentBytes(r); return true; });
    recovered.push({
      fileNo: f.fileNo, streamId: f.info.streamId, firstSeq: f.info.firstSeq, count: f.info.recordCount,
      frame: f.frame, timestamps: frameTimestamps(f.frame), contentBytes: content,
    });
  });
  if (cutBytes > 0) console.error(`svcd: recovery cut a torn WAL tail of ${cutBytes} bytes`);
  const ring = createRingBuffers(LOG_RING_BYTES);
  const walFileNo = lastFileNo + 1;
  const flusher = new Worker(FLUSHER_ENTRY, { workerData: { ring, walDir, fileNo: walFileNo }, execArgv: workerExecArgv() });
  const log = new LogRingWriter(ring);
  let stopping = false;
  let exited = false;
  flusher.on('error', (err) => { logError('flusher crashed; no append is acknowledged any more', err); log.markFailed(); });
  flusher.on('exit', (code) => {
    exited = true;
    if (!stopping) { logError(`flusher exited (${code}); no append is acknowledged any more`); log.markFailed(); }
  });
  // The flusher thread starts after this returns: from its tsx entry it compiled its TypeScript
  // first (about 0.3 s here), and a star that listened at once held its first append that long.
  // Ready once the flusher has opened its first file, or has failed (then appends fail as they
  // would), or after WAL_FLUSHER_START_MS_MAX.
  const ready = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, WAL_FLUSHER_START_MS_MAX);
    timer.unref();
    const done = (): void => { clearTimeout(timer); resolve(); };
    flusher.once('message', done);
    flusher.once('error', done);
    flusher.once('exit', done);
  });
  return {
    log, walFiles, walFileNo, ready,
    failed: () => log.failed(),
    failureCause: () => log.failureCause(),
    async stop() {
      stopping = true;
      // The flusher drains the ring first, so every append it made durable is acknowledged.
      log.stop();
      if (!exited) await new Promise<void>((r) => { flusher.once('exit', () => r()); });
    },
  };
}

/** Settle uploads and the auditor's checks run in workers with their own store client: their
 *  outcome is the object store's health as the star sees it. */
function trackSettler(settler: SegmentSettler, health: DependencyHealth): SegmentSettler {
  return { settle: (fileNo, streams) => tracked(settler.settle(fileNo, streams), health) };
}

function trackChecker(checker: SegmentChecker, health: DependencyHealth): SegmentChecker {
  return { check: (segs) => tracked(checker.check(segs), health) };
}

function tracked<T>(outcome: Promise<T>, health: DependencyHealth): Promise<T> {
  return outcome.then((r) => {
    health.succeeded();
    return r;
  }, (err: unknown) => {
    health.failed(err instanceof Error ? err.message : String(err));
    throw err;
  });
}

/** Where the other stars and the Gateway reach this star's bridge: --advertise-bridge-address; else
 *  the listen address, unless that is every interface (0.0.0.0, ::), which names no host another
 *  machine can dial: then --advertise-address's host (the gRPC one) with the bridge's port. */
function bridgeAdvertised(listenHost: string, port: number, explicit: string, grpcAdvertised: string): string {
  if (explicit !== '') return explicit;
  const wildcard = listenHost === '0.0.0.0' || listenHost === '::';
  const grpcHost = hostPort(grpcAdvertised, 'advertise-address')?.host;
  if (wildcard && grpcHost !== undefined) return hostPortText(grpcHost, port);
  if (wildcard) console.error(`svcd: the data bridge listens on ${listenHost}, which other stars and the Gateway cannot dial; give --advertise-bridge-address (or --advertise-address) in a cluster`);
  return hostPortText(listenHost, port);
}

/** The gRPC port serves TLS whenever the data bridge does (one mode for every caller, spec: Auth).
 *  Under mtls the handshake itself verifies the client certificate against --tls-client-ca, so a call
 *  that reaches a handler carries a verified certificate. */
function grpcTlsCredentials(tls: { cert: string; key: string; ca?: string }, requireClientCert: boolean): grpc.ServerCredentials {
  return grpc.ServerCredentials.createSsl(
    tls.ca ? readFileSync(tls.ca) : null,
    [{ cert_chain: readFileSync(tls.cert), private_key: readFileSync(tls.key) }],
    requireClientCert,
  );
}

/** Connects src/auth to the gRPC planes: the same authenticator and the same authorization function. */
function grpcAuthHooks(auth: AuthModule | undefined, transport: { clientCertVerified: boolean }): GrpcAuthHooks | undefined {
  if (!auth) return undefined;
  return {
    async authorize(req) {
      const v = req.metadata.get('authorization');
      const principal = await auth.authenticator.authenticate(v.map(String), transport);
      const op = (req.plane === 'admin' ? 'Admin' : req.verb) as Operation;
      authorize(principal, op, { bucket: req.bucket, key: req.key });
      checkFencingPin(principal, op, req.fencing_token);
      return { expMs: principal.expMs };
    },
    async authenticate(metadata) {
      await auth.authenticator.authenticate(metadata.get('authorization').map(String), transport);
    },
    exchangeToken: auth.verifier?.signer ? (req) => auth.exchanger.exchange(req) : undefined,
    createCredential: async (req) => {
      const c = await auth.registry.create(req.scope, req.key_id);
      return { credential: { key_id: c.key_id, scope: c.scope, state: c.state, created_at_unix_ms: c.created_at_unix_ms }, secret: c.secret };
    },
    listCredentials: async (startAfter, limit) => {
      const page = await auth.registry.list(startAfter, limit);
      return { items: page.items.map((c) => ({ key_id: c.key_id, scope: c.scope, state: c.state, created_at_unix_ms: c.created_at_unix_ms })), next: page.next };
    },
    revokeCredential: async (keyId) => {
      const c = await auth.registry.revoke(keyId);
      return { key_id: c.key_id, scope: c.scope, state: c.state, created_at_unix_ms: c.created_at_unix_ms };
    },
  };
}
