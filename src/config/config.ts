// svcd's flags and SVCD_* environment variables, parsed into one typed config. The rules (a flag beats
// its variable; an unknown flag or a bad value refuses to boot with a one-line reason) are the flag
// framework's (./flags.ts), shared with the Gateway and the command-line tools.

import {
  BODY_BYTES_IN_FLIGHT_MAX, GRPC_KEEPALIVE_PING_MS, GRPC_KEEPALIVE_PING_MS_MIN, BODY_BYTES_IN_FLIGHT_PER_TENANT_MAX, COMMIT_LINGER_MS_STANDARD, LEASE_IDLE_MS, READ_GRACE_MS_DEFAULT, AUDIT_SCRUB_MS_DEFAULT, LEASE_SAFETY_MARGIN_MS, LEASE_TTL_MS, LEASE_TTL_MS_MIN, UNSETTLED_SWEEP_MS, READ_BYTES_MAX, READ_RECORDS_MAX, READPLAN_TTL_MS_DEFAULT, SSE_CONNECTIONS_PER_HOST_MAX, SSE_HEARTBEAT_MS, SSE_STALL_MS,
  WAL_FILE_BYTES_MAX, WAL_SETTLE_AFTER_MS, DS_LONG_POLL_MS,
} from './limits.ts';
import {
  boolValue, durationMs, FlagError as ConfigError, hostPort, listValue, nonNegativeInt, parseFlags, positiveInt, timerMs, usageText, type FlagSpec,
} from './flags.ts';
import { isBucketName, isReservedBucketName } from '../protocol/rules.ts';

// Every refusal of a flag or variable is one error type, whichever command parses it; the name
// ConfigError stays for svcd's callers.
export { boolValue, ConfigError, durationMs, hostPort, type FlagSpec };

export const FLAGS: FlagSpec[] = [
  { name: 'listen', env: 'SVCD_LISTEN', help: 'data bridge address host:port (empty disables it)', default: '127.0.0.1:7070' },
  { name: 'data-dir', env: 'SVCD_DATA_DIR', help: 'directory for the WAL, metadata and the fs object store', default: './data' },
  { name: 'star-id', env: 'SVCD_STAR_ID', help: 'this star\'s name in the cluster (1-64 of A-Z a-z 0-9 . _ -); default: one made at first start and kept in <data-dir>/star-id', default: '' },
  { name: 'advertise-address', env: 'SVCD_ADVERTISE_ADDRESS', help: 'host:port other stars and ListStars use to reach this star\'s gRPC listener; default: the --grpc-listen address', default: '' },
  { name: 'advertise-bridge-address', env: 'SVCD_ADVERTISE_BRIDGE_ADDRESS', help: 'host:port other stars (the one-hop proxy) and the Gateway use to reach this star\'s data bridge; default: the --listen address, or, when it listens on every interface (0.0.0.0, ::), the --advertise-address host with the bridge\'s port', default: '' },
  { name: 'http-engine', env: 'SVCD_HTTP_ENGINE', help: 'uws (native uWebSockets.js, falls back to node when it cannot load) or node (node:http)', default: 'uws' },
  { name: 'grpc-listen', env: 'SVCD_GRPC_LISTEN', help: 'gRPC data and admin plane address host:port (empty disables it)', default: '' },
  { name: 'grpc-keepalive-ms', env: 'SVCD_GRPC_KEEPALIVE_MS', help: 'the star pings each gRPC connection this often and drops one that does not answer', default: String(GRPC_KEEPALIVE_PING_MS) },
  { name: 'metrics-listen', env: 'SVCD_METRICS_LISTEN', help: 'ops listener host:port for /metrics, /healthz, /readyz, /admin/ (empty removes it)', default: '' },
  { name: 'admin-ui', env: 'SVCD_ADMIN_UI', help: 'serve the read-only dashboard on the ops listener', default: 'true', boolean: true },
  { name: 'admin-ui-reader', env: 'SVCD_ADMIN_UI_READER', help: 'allow ReadStreamRecords on the admin bridge', default: 'true', boolean: true },
  { name: 'max-read-records', env: 'SVCD_MAX_READ_RECORDS', help: 'records per read response (limit is clamped to it)', default: String(READ_RECORDS_MAX) },
  { name: 'max-read-bytes', env: 'SVCD_MAX_READ_BYTES', help: 'bytes per read response (max_bytes is clamped to it)', default: String(READ_BYTES_MAX) },
  { name: 'readplan-ttl', env: 'SVCD_READPLAN_TTL', help: 'read plan validity: a duration such as 5m, 300s or 300000ms (a bare number is milliseconds)', default: `${READPLAN_TTL_MS_DEFAULT / 60_000}m` },
  { name: 'read-grace', env: 'SVCD_READ_GRACE', help: 'objects released by trim, retention or deletion are deleted this long after (at least twice --readplan-ttl, or the boot is refused)', default: `${READ_GRACE_MS_DEFAULT / 60_000}m` },
  { name: 'audit-scrub-interval', env: 'SVCD_AUDIT_SCRUB_INTERVAL', help: 'the auditor verifies every settled segment this star\'s streams name again this often (a duration; 0 only verifies each once, when settled)', default: `${AUDIT_SCRUB_MS_DEFAULT / 60_000}m` },
  { name: 'readplan-vending', env: 'SVCD_READPLAN_VENDING', help: 'presigned or raw', default: 'presigned' },
  { name: 'sse-heartbeat-ms', env: 'SVCD_SSE_HEARTBEAT_MS', help: 'SSE heartbeat period', default: String(SSE_HEARTBEAT_MS) },
  { name: 'sse-stall-ms', env: 'SVCD_SSE_STALL_MS', help: 'an SSE consumer that has not drained for this long is disconnected', default: String(SSE_STALL_MS) },
  { name: 'sse-connections-max', env: 'SVCD_SSE_CONNECTIONS_MAX', help: 'SSE connections per HTTP host; past it 503 with Retry-After: 1', default: String(SSE_CONNECTIONS_PER_HOST_MAX) },
  { name: 'wal-file-bytes-max', env: 'SVCD_WAL_FILE_BYTES_MAX', help: 'a WAL file is sealed and settled into segments at this size', default: String(WAL_FILE_BYTES_MAX) },
  { name: 'wal-settle-after-ms', env: 'SVCD_WAL_SETTLE_AFTER_MS', help: 'a non-empty WAL file is sealed and settled this long after it was opened', default: String(WAL_SETTLE_AFTER_MS) },
  { name: 'lease-idle-ms', env: 'SVCD_LEASE_IDLE_MS', help: 'a stream stays leased this long after its last append (then vacant, shown idle)', default: String(LEASE_IDLE_MS) },
  { name: 'commit-linger-ms', env: 'SVCD_COMMIT_LINGER_MS', help: 'a cluster: how long a group commit of standard-class appends waits for more before its object PUT (express never waits)', default: String(COMMIT_LINGER_MS_STANDARD) },
  { name: 'unsettled-sweep-ms', env: 'SVCD_UNSETTLED_SWEEP_MS', help: 'a cluster: each star adopts the vacant streams it is home to whose committed chunks are not settled, and settles them, this often', default: String(UNSETTLED_SWEEP_MS) },
  { name: 'lease-ttl-ms', env: 'SVCD_LEASE_TTL_MS', help: `a cluster (--metadata postgres): a stream's lease runs out this long after its leader last renewed it; a dead leader's streams move within it (at least ${LEASE_TTL_MS_MIN})`, default: String(LEASE_TTL_MS) },
  { name: 'body-budget-bytes', env: 'SVCD_BODY_BUDGET_BYTES', help: 'request-body bytes received and not yet handled, for the whole star; past it 429', default: String(BODY_BYTES_IN_FLIGHT_MAX) },
  { name: 'body-budget-per-tenant-bytes', env: 'SVCD_BODY_BUDGET_PER_TENANT_BYTES', help: 'the same for one caller (a token\'s sub; jwt mode), so one tenant cannot take the star\'s whole budget', default: String(BODY_BYTES_IN_FLIGHT_PER_TENANT_MAX) },
  { name: 'ops-allowed-hosts', env: 'SVCD_OPS_ALLOWED_HOSTS', help: 'comma-separated host names the ops listener answers besides IP addresses, localhost and its own --metrics-listen host (a DNS-rebinding guard: any other Host header is 403)', default: '' },
  { name: 'cors-allowed-origins', env: 'SVCD_CORS_ALLOWED_ORIGINS', help: 'comma-separated browser origins allowed to call the data bridge (* for any); empty denies every CORS preflight', default: '' },
  { name: 'ds-enabled', env: 'SVCD_DS_ENABLED', help: 'serve the Durable Streams protocol under /ds on the data bridge', default: 'true', boolean: true },
  { name: 'ds-bucket', env: 'SVCD_DS_BUCKET', help: 'bucket holding the Durable Streams streams (created at first use)', default: 'ds' },
  { name: 'ds-long-poll-ms', env: 'SVCD_DS_LONG_POLL_MS', help: 'a Durable Streams long-poll at the tail answers 204 after this long without data', default: String(DS_LONG_POLL_MS) },
  { name: 'express-bucket', env: 'SVCD_EXPRESS_BUCKET', help: 'object-store bucket for the express storage class; without it no stream can be switched to express', default: '' },
  { name: 'object-store', env: 'SVCD_OBJECT_STORE', help: 'fs (a directory under --data-dir) or s3 (--s3-bucket; credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or the SDK\'s chain)', default: 'fs' },
  { name: 's3-bucket', env: 'SVCD_S3_BUCKET', help: 'S3 bucket for settled segments (--object-store s3)', default: '' },
  { name: 's3-prefix', env: 'SVCD_S3_PREFIX', help: 'prefix of every object key in the S3 bucket', default: '' },
  { name: 's3-region', env: 'SVCD_S3_REGION', help: 'S3 region', default: 'us-east-1' },
  { name: 's3-endpoint', env: 'SVCD_S3_ENDPOINT', help: 'an S3-protocol endpoint other than AWS (MinIO, s3rver), http(s)://host:port', default: '' },
  { name: 's3-force-path-style', env: 'SVCD_S3_FORCE_PATH_STYLE', help: 'address the bucket in the path, not the host name (most S3-protocol servers)', default: 'false', boolean: true },
  { name: 'metadata', env: 'SVCD_METADATA', help: 'local (journal + snapshot under --data-dir) or postgres (--postgres-url, --postgres-schema)', default: 'local' },
  { name: 'postgres-url', env: 'SVCD_POSTGRES_URL', help: 'PostgreSQL for --metadata postgres, postgres://user@host:port/db (prefer the variable when it holds a password)', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
  { name: 'postgres-schema', env: 'SVCD_POSTGRES_SCHEMA', help: 'schema holding the metadata tables (created when absent); one star owns a schema', default: 'svcd' },
  { name: 'help', env: '', help: 'print this help and exit', boolean: true },
];

/** Where buckets, streams and credentials are kept (the WAL and fs objects stay in the data dir). */
export type MetadataConfig = { backend: 'local' } | { backend: 'postgres'; url: string; schema: string };

const POSTGRES_SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

function metadataConfig(backend: string, url: string, schema: string): MetadataConfig {
  if (backend === 'local') return { backend };
  if (backend !== 'postgres') throw new ConfigError('--metadata must be local or postgres');
  if (!/^postgres(ql)?:\/\//.test(url)) throw new ConfigError('--postgres-url must be a postgres:// URL');
  if (!POSTGRES_SCHEMA_NAME.test(schema)) throw new ConfigError('--postgres-schema must be a lower-case identifier (a-z, 0-9, _)');
  return { backend, url, schema };
}

/** The metadata backend named by SVCD_METADATA, SVCD_POSTGRES_URL and SVCD_POSTGRES_SCHEMA (for tools,
 *  such as the credentials CLI, that take no star flags). */
export function metadataConfigFromEnv(env: NodeJS.ProcessEnv): MetadataConfig {
  const flags = parseFlags([], FLAGS, env); // no argv: the variables and defaults only
  const value = (name: string): string => flags.str(name) ?? '';
  return metadataConfig(value('metadata'), value('postgres-url'), value('postgres-schema'));
}

/** Where settled segments go: the data dir's objects/ (fs) or an S3 bucket. */
export type ObjectStoreChoice =
  | { backend: 'fs' }
  | { backend: 's3'; bucket: string; prefix: string; region: string; endpoint: string; forcePathStyle: boolean };

function objectStoreConfig(get: (flag: string) => string): ObjectStoreChoice {
  const backend = get('object-store');
  if (backend === 'fs') return { backend };
  if (backend !== 's3') throw new ConfigError('--object-store must be fs or s3');
  const bucket = get('s3-bucket');
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new ConfigError('--object-store s3 needs --s3-bucket, a valid S3 bucket name');
  const endpoint = get('s3-endpoint');
  if (endpoint !== '' && !/^https?:\/\/[^/]+\/?$/.test(endpoint)) throw new ConfigError('--s3-endpoint must be http(s)://host[:port]');
  return {
    backend, bucket, prefix: get('s3-prefix'), region: get('s3-region') || 'us-east-1', endpoint,
    forcePathStyle: boolValue(get('s3-force-path-style'), 's3-force-path-style'),
  };
}

export interface Config {
  listen: { host: string; port: number } | undefined;
  dataDir: string;
  metadata: MetadataConfig;
  objectStore: ObjectStoreChoice;
  httpEngine: 'uws' | 'node';
  grpcListen: { host: string; port: number } | undefined;
  /** The gRPC listener's keepalive PING period (a peer that does not answer is dropped). */
  grpcKeepaliveMs: number;
  metricsListen: { host: string; port: number } | undefined;
  adminUi: boolean;
  adminUiReader: boolean;
  maxReadRecords: number;
  maxReadBytes: number;
  readplanTtlMs: number;
  /** Released objects are deleted this long after their release (the auditor's deletions queue). */
  readGraceMs: number;
  /** The auditor's scrub: every named segment verified again this often (0: never). */
  auditScrubMs: number;
  /** Origins allowed by CORS (`*` for any); empty denies every preflight. */
  corsAllowedOrigins: string[];
  /** Request-body budgets (bytes received, not yet handled): star-wide and per tenant (sub). */
  bodyBudget: { starBytes: number; tenantBytes: number };
  /** Host names the ops listener answers besides IP literals, localhost and its listen host. */
  opsAllowedHosts: string[];
  /** The Durable Streams surface under /ds (src/api/ds/): on or off, its bucket, its long-poll wait. */
  ds: { enabled: boolean; bucket: string; longPollMs: number };
  /** The express class's bucket; '' when none is set (PATCH to express is refused). */
  expressBucket: string;
  leaseIdleMs: number;
  leaseTtlMs: number;
  unsettledSweepMs: number;
  commitLingerMs: number;
  /** --star-id as given ('' when the data dir's own id is to be used). */
  starId: string;
  /** --advertise-address as given ('' for the gRPC listen address). */
  advertiseAddress: string;
  /** --advertise-bridge-address as given ('' for the default: see bridgeAdvertised in server.ts). */
  advertiseBridgeAddress: string;
  readplanVending: 'presigned' | 'raw';
  sse: { heartbeatMs: number; stallMs: number; connectionsMax: number };
  wal: { fileBytesMax: number; settleAfterMs: number };
  help: boolean;
  /** Every flag's raw value (for modules, such as auth, that parse their own flags). */
  raw: Map<string, string>;
}

export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv, extra: readonly FlagSpec[] = []): Config {
  const specs = [...FLAGS, ...extra];
  const flags = parseFlags(argv, specs, env);
  const raw = new Map<string, string>();
  for (const s of specs) {
    const v = s.name === '' ? undefined : flags.str(s.name);
    if (v !== undefined) raw.set(s.name, v);
  }
  const get = (n: string): string => raw.get(n) ?? '';
  const engine = get('http-engine');
  if (engine !== 'uws' && engine !== 'node') throw new ConfigError('--http-engine must be uws or node');
  const vending = get('readplan-vending');
  if (vending !== 'presigned' && vending !== 'raw') throw new ConfigError('--readplan-vending must be presigned or raw');
  const objectStore = objectStoreConfig(get);
  const metadata = metadataConfig(get('metadata'), get('postgres-url'), get('postgres-schema'));
  const readplanTtlMs = durationMs(get('readplan-ttl'), 'readplan-ttl');
  const readGraceMs = durationMs(get('read-grace'), 'read-grace');
  if (readplanTtlMs * 2 > readGraceMs) {
    // A plan could name an object deleted while the plan is still valid (spec: Limits).
    throw new ConfigError(`--readplan-ttl (${readplanTtlMs} ms) must be at most half the read grace (--read-grace, ${readGraceMs} ms)`);
  }
  return {
    listen: hostPort(get('listen'), 'listen'),
    dataDir: dataDirValue(get('data-dir')),
    metadata,
    objectStore,
    httpEngine: engine,
    grpcListen: hostPort(get('grpc-listen'), 'grpc-listen'),
    grpcKeepaliveMs: keepaliveValue(get('grpc-keepalive-ms')),
    metricsListen: hostPort(get('metrics-listen'), 'metrics-listen'),
    adminUi: boolValue(get('admin-ui'), 'admin-ui'),
    adminUiReader: boolValue(get('admin-ui-reader'), 'admin-ui-reader'),
    maxReadRecords: positiveInt(get('max-read-records'), 'max-read-records'),
    maxReadBytes: positiveInt(get('max-read-bytes'), 'max-read-bytes'),
    readplanTtlMs,
    readGraceMs,
    auditScrubMs: durationMs(get('audit-scrub-interval'), 'audit-scrub-interval', 'each segment is verified once, when settled'),
    corsAllowedOrigins: listValue(get('cors-allowed-origins')),
    bodyBudget: { starBytes: positiveInt(get('body-budget-bytes'), 'body-budget-bytes'), tenantBytes: positiveInt(get('body-budget-per-tenant-bytes'), 'body-budget-per-tenant-bytes') },
    opsAllowedHosts: listValue(get('ops-allowed-hosts')),
    ds: { enabled: boolValue(get('ds-enabled'), 'ds-enabled'), bucket: checkDsBucket(get('ds-bucket')), longPollMs: positiveInt(get('ds-long-poll-ms'), 'ds-long-poll-ms') },
    expressBucket: get('express-bucket'),
    leaseIdleMs: nonNegativeInt(get('lease-idle-ms'), 'lease-idle-ms'),
    leaseTtlMs: leaseTtlValue(get('lease-ttl-ms')),
    unsettledSweepMs: timerMs(get('unsettled-sweep-ms'), 'unsettled-sweep-ms'),
    commitLingerMs: nonNegativeInt(get('commit-linger-ms'), 'commit-linger-ms'),
    starId: starIdValue(get('star-id')),
    advertiseAddress: get('advertise-address') === '' ? '' : advertised(get('advertise-address'), 'advertise-address'),
    advertiseBridgeAddress: get('advertise-bridge-address') === '' ? '' : advertised(get('advertise-bridge-address'), 'advertise-bridge-address'),
    readplanVending: vending,
    sse: {
      heartbeatMs: timerMs(get('sse-heartbeat-ms'), 'sse-heartbeat-ms'),
      stallMs: timerMs(get('sse-stall-ms'), 'sse-stall-ms'),
      connectionsMax: positiveInt(get('sse-connections-max'), 'sse-connections-max'),
    },
    wal: {
      fileBytesMax: positiveInt(get('wal-file-bytes-max'), 'wal-file-bytes-max'),
      settleAfterMs: positiveInt(get('wal-settle-after-ms'), 'wal-settle-after-ms'),
    },
    help: flags.bool('help'),
    raw,
  };
}

/** The DS bucket name: the rule of bucket names (protocol/rules.ts), checked at boot rather than at first use. */
function checkDsBucket(v: string): string {
  if (!isBucketName(v)) throw new ConfigError(`--ds-bucket ${JSON.stringify(v)}: 1-128 of A-Z a-z 0-9 . _ - starting with a letter or digit`);
  if (isReservedBucketName(v)) throw new ConfigError(`--ds-bucket ${JSON.stringify(v)}: api is reserved (in any case) and is never a bucket`);
  return v;
}

function keepaliveValue(v: string): number {
  const n = timerMs(v, 'grpc-keepalive-ms');
  if (n < GRPC_KEEPALIVE_PING_MS_MIN) throw new ConfigError(`--grpc-keepalive-ms must be at least ${GRPC_KEEPALIVE_PING_MS_MIN} ms (each gRPC connection is pinged that often), got ${v}`);
  return n;
}

function leaseTtlValue(v: string): number {
  const n = positiveInt(v, 'lease-ttl-ms');
  if (n < LEASE_TTL_MS_MIN) throw new ConfigError(`--lease-ttl-ms must be at least ${LEASE_TTL_MS_MIN} ms (a leader serves for the TTL less ${LEASE_SAFETY_MARGIN_MS} ms, renewing every third of it), got ${v}`);
  return n;
}

function dataDirValue(v: string): string {
  // An empty value would make the current directory the data dir, with the WAL and LOCK among whatever is there.
  if (v.trim() === '') throw new ConfigError('--data-dir must name a directory (it is empty)');
  return v;
}

/** Star ids: short, and safe in a file name, a log line and a URL. */
export const STAR_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

function starIdValue(v: string): string {
  if (v !== '' && !STAR_ID_PATTERN.test(v)) throw new ConfigError(`--star-id ${JSON.stringify(v)}: 1-64 of A-Z a-z 0-9 . _ -`);
  return v;
}

function advertised(v: string, flag: string): string {
  const hp = hostPort(v, flag);
  if (!hp || hp.port === 0) throw new ConfigError(`--${flag} ${JSON.stringify(v)}: a host:port others can dial (port not 0)`);
  return `${hp.host}:${hp.port}`;
}

/** svcd's --help: its flags and the extra ones (auth) the caller adds. */
export function helpText(extra: readonly FlagSpec[] = []): string {
  return usageText('usage: svcd [flags]', [...FLAGS, ...extra]);
}
