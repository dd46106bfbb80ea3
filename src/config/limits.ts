// Every limit of the spec's Limits table, plus the service's own bounds, as named constants with the
// unit in the name. Flags that override a limit are parsed in config.ts; nothing else hard-codes a number.
//
// The wire's limits (what a request or an answer may hold: the spec's caps on batches, records, reads
// and list pages, and the bounds on names, keys and tokens) are defined in the protocol leaf, which
// the client shares, and re-exported here with the rest.

import { APPEND_RECORDS_MAX, BATCH_CONTENT_BYTES_MAX } from '../protocol/limits.ts';

export {
  APPEND_RECORDS_MAX, BATCH_CONTENT_BYTES_MAX, BUCKET_NAME_BYTES_MAX, CREATION_TOKEN_BYTES_MAX, FENCING_TOKEN_BYTES_MAX,
  LIST_PAGE_DEFAULT, LIST_PAGE_MAX, LOCATION_BYTES_MAX, READ_BYTES_MAX, READ_RECORDS_MAX, RECORD_CONTENT_BYTES_MAX,
  RECORD_HEADERS_MAX, STREAM_KEY_BYTES_MAX,
} from '../protocol/limits.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

// --- Spec: Limits table (beyond the wire's, in ../protocol/limits.ts) --------------------------
export const READPLAN_ENTRIES_MAX = 256;
export const READPLAN_TTL_MS_DEFAULT = 5 * 60_000;
export const SUBSCRIPTIONS_PER_STAR_MAX = 16_384;
/** Producer sessions (gRPC AppendSession) open at once on one star; past it RESOURCE_EXHAUSTED, the
 *  spec's "sessions … at a cap" (Errors). The spec gives no number: the subscriptions' is used. What
 *  the sessions hold unacknowledged is bounded apart (APPEND_SESSION_INFLIGHT_BYTES_MAX each, and
 *  STAR_INFLIGHT_BYTES_MAX for the star). */
export const APPEND_SESSIONS_PER_STAR_MAX = 16_384;
export const SSE_CONNECTIONS_PER_HOST_MAX = 4096;
export const SSE_HEARTBEAT_MS = 15_000;
export const SSE_STALL_MS = 60_000;
/** The longest delay a Node timer keeps: a longer one fires after 1 ms. Flags that set an interval
 *  are refused past it; a wait longer than it (a token's exp) is re-armed or capped. */
export const TIMER_DELAY_MS_MAX = 2 ** 31 - 1;
/** uWebSockets.js 20.30 closes a response's socket 10 s after a write finds it full (its
 *  HTTP_TIMEOUT_S, which JavaScript cannot set), long before SSE_STALL_MS. An event stream whose
 *  consumer stopped reading re-arms that timer this often (pause() and resume(): see UwsSseSink)
 *  until the socket drains or the pump's own stall bound ends the stream. */
export const UWS_STALL_REARM_MS = 4_000;
/** An event stream that ends (token expiry, a stopping star, the end of a relayed or Durable Streams
 *  stream) while its consumer is not reading keeps its last bytes at most this long without the
 *  consumer taking any, then the connection is dropped. uWS does so on its own 10 s timeout once the
 *  response has ended (the stall re-arm above stops there); native-free/ and the Gateway match it
 *  (api/end-bounded.ts), as node:http has no write timeout. */
export const STREAM_END_FLUSH_MS_MAX = 10_000;
export const SCOPE_TOKENS_MAX = 64;
export const EXCHANGE_TTL_SECONDS_DEFAULT = 15 * 60;
export const EXCHANGE_TTL_SECONDS_MAX = 60 * 60;
export const CORS_PREFLIGHT_MAX_AGE_S = 600;
export const ADMIN_READER_RECORDS_MAX = 500;
export const ADMIN_READER_BYTES_MAX = 1 * MiB;

// --- Request parsing -----------------------------------------------------------------------------
/** Base64 inflates 4/3 and JSON adds escaping: the most a valid append body can weigh on the wire. */
export const APPEND_BODY_BYTES_MAX = Math.ceil((BATCH_CONTENT_BYTES_MAX * 4) / 3) + 16 * MiB;
/** An answer given before a request's body was read (an early 404 or 401) waits for at most this much
 *  of the body to arrive and be dropped, so the keep-alive connection stays usable; past it, close.
 *  A client (the Gateway among them) still writing a body into a connection the star closed gets a
 *  broken pipe, and often loses the answer with it: an append refused 401 was 503 "retry" through
 *  the Gateway. 8 MiB covers most appends; read and dropped, never kept, within the time below. */
export const UNREAD_BODY_DRAIN_BYTES_MAX = 8 * MiB;
/** A body sent with a method that takes none (a GET's): held at most this much before the answer,
 *  and past it the connection is closed (uWS buffers what arrives before the route is known). */
export const BODYLESS_METHOD_BODY_BYTES_MAX = 64 * KiB;
/** … and waits at most this long for it, then answers with `Connection: close`. */
export const UNREAD_BODY_DRAIN_MS_MAX = 2000;
/** Control-plane bodies (bucket/stream config, trim, fence, exchange) are small. */
export const CONTROL_BODY_BYTES_MAX = 64 * KiB;
/** Appends whose body is at least this big are parsed and encoded on a piscina worker (bench/parse-threshold). */
export const WORKER_PARSE_BYTES_MIN = 256 * KiB;

/** A request body is cut (connection closed, no answer) when, within this long of its start or of
 *  the last time the window was renewed, fewer than REQUEST_BODY_WINDOW_BYTES_MIN more of it arrive:
 *  a body that stalls, or one that trickles in slower than 16 KiB/s. uWS does so on its own (its idle
 *  timeout of 10 s, renewed only after 16 KiB per second of it: HTTP_RECEIVE_THROUGHPUT_BYTES in
 *  HttpContext.h, constants of the library); native-free/ matches it, so both engines take the same
 *  uploads. */
export const REQUEST_BODY_IDLE_MS_MAX = 10_000;
/** What must arrive within each REQUEST_BODY_IDLE_MS_MAX window of a body: uWS's 16 KiB a second. */
export const REQUEST_BODY_WINDOW_BYTES_MIN = 160 * KiB;
/** node:http engine: requests pipelined on one connection wait their turn (each starts once the one
 *  before it is answered); at this many waiting the connection is not read until one starts. */
export const PIPELINED_REQUESTS_QUEUED_MAX = 32;
/** A request head (request line and headers) over this many bytes is answered 431 and closed.
 *  node:http enforces it; uWS (20.30) has its own native bounds and drops such heads (README). */
export const REQUEST_HEAD_BYTES_MAX = 16 * KiB;
/** The exchange mints no token longer than this: a request head must carry it with its request line
 *  and other fields (4 KiB of room) inside REQUEST_HEAD_BYTES_MAX, or every use would be refused. */
export const MINTED_TOKEN_CHARS_MAX = REQUEST_HEAD_BYTES_MAX - 4 * KiB;
/** A request with more header fields than this is answered 431 and closed (node engine; uWS stops
 *  at 47 natively, see README). */
export const REQUEST_HEADERS_MAX = 100;
/** A request head not whole this long after its first byte is answered 408 and closed (node engine;
 *  uWS closes it unanswered on its fixed 10 s idle timeout). */
export const REQUEST_HEAD_MS_MAX = 10_000;
/** node:http checks for expired heads this often, so one is cut within this much after the limit. */
export const REQUEST_HEAD_CHECK_MS = 1000;
/** A refused head's connection reads and drops what the client still sends for at most this many
 *  bytes and this long, so the refusal reaches it before the close (closing on unread bytes resets
 *  the connection, and the client may lose the answer). */
export const REFUSED_HEAD_DRAIN_BYTES_MAX = 256 * KiB;
export const REFUSED_HEAD_DRAIN_MS_MAX = 2000;
/** On uWS, a request declaring a body of at most this many bytes is dispatched once the body is
 *  whole (larger ones are dispatched at once, so a refused upload is not read first). */
export const UWS_BODY_FIRST_BYTES_MAX = 64 * KiB;
/** … and one whose body stalls is dispatched without it after one to two periods of this sweep. */
export const UWS_BODY_WAIT_SWEEP_MS = 250;
/** At most this many requests wait for their small body at once (so at most 256 MiB of bodies sit
 *  outside BODY_BYTES_IN_FLIGHT_MAX); past it a request is dispatched at once. */
export const UWS_BODY_WAITING_MAX = 4096;
/** Route matches kept by method and raw path (src/api/routes.ts); the cache is emptied when full. */
export const ROUTE_MATCH_CACHE_ENTRIES_MAX = 4096;
/** Longer paths are matched every time rather than kept. */
export const ROUTE_MATCH_CACHE_PATH_CHARS_MAX = 512;

// --- Memory bounds (back-pressure, never unbounded buffering) ----------------------------------------
/** Sequenced-but-not-yet-durable bytes per stream; past it an append is refused with 429. */
export const STREAM_INFLIGHT_BYTES_MAX = 64 * MiB;
/** A match_seq_num miss is answered once no append of its stream is in flight, so its tail is the
 *  next value to try (spec: Errors); it waits for the stream to drain at most this many times when
 *  other producers keep sequencing meanwhile, then answers with the committed tail as it stands. */
export const MATCH_MISS_DRAIN_WAITS_MAX = 8;
/** Longest an append waits its turn under its stream's throughput cap; a longer wait is 429. */
export const APPEND_PACE_WAIT_MS_MAX = 10_000;
/** Sequenced-but-not-yet-durable bytes for the whole star. */
export const STAR_INFLIGHT_BYTES_MAX = 256 * MiB;
/** A producer session (core/producer-session.ts; gRPC AppendSession) stops reading its client while
 *  its unacknowledged batches weigh more than this … */
export const APPEND_SESSION_INFLIGHT_BYTES_MAX = 32 * MiB;
/** … or number this many. */
export const APPEND_SESSION_INFLIGHT_BATCHES_MAX = 1024;
/** Accounting weight of a record beyond its content, so batches of empty records still count. */
export const APPEND_SESSION_RECORD_OVERHEAD_BYTES = 16;
/** Longest linger a producer session honours (a larger batch_max_delay_ms is clamped to it). */
export const APPEND_SESSION_DELAY_MS_MAX = 60_000;
/** Request-body bytes received and being read or parsed at once for the whole star; past it 429
 *  (--body-budget-bytes). Charged as bytes arrive, never by a declared Content-Length. */
export const BODY_BYTES_IN_FLIGHT_MAX = 1024 * MiB;
/** … and for one tenant (a token's `sub`; --body-budget-per-tenant-bytes), so one caller's slow or
 *  huge uploads cannot take the whole star's budget from the others. */
export const BODY_BYTES_IN_FLIGHT_PER_TENANT_MAX = 256 * MiB;
/** Unsettled frames are carved out of chunks of this size (src/core/frame-arena.ts). */
export const FRAME_ARENA_CHUNK_BYTES = 1 * MiB;
/** Size of the SharedArrayBuffer log ring between the sequencer and the flusher. */
export const LOG_RING_BYTES = 512 * MiB;
/** Unsettled (WAL-only) bytes held in memory for reads; past it the WAL is rotated and settled early. */
export const UNSETTLED_BYTES_MAX = 512 * MiB;

// --- Storage -----------------------------------------------------------------------------------
/** The flusher zero-fills a WAL file ahead of its frames in steps of this size (fdatasync then
 *  needs no metadata commit); sealed and stopped files are cut back to their frames. */
export const WAL_PREALLOC_STEP_BYTES = 1 * MiB;
/** While no append waits, the flusher keeps this much zero-filled and synced room past its frames,
 *  filling WAL_PREFILL_CHUNK_BYTES at a time (each then synced). A group commit that has to zero-fill
 *  a step itself takes about 3 ms more on this machine's disk (2.5 ms to write the MiB of zeros,
 *  0.6 ms more fdatasync), which every producer of that group and the next waits out: about ten
 *  times a second at 64 producers, enough to set the ack p99. A chunk is what an arriving group
 *  may wait behind instead. */
export const WAL_PREFILL_AHEAD_BYTES = 2 * MiB;
export const WAL_PREFILL_CHUNK_BYTES = 256 * 1024;
/** Group commit: when the last fdatasync covered at least WAL_GROUP_LINGER_MIN_APPENDS appends and
 *  fewer are waiting now, the flusher waits this long for the rest of the group before the next one. */
export const WAL_GROUP_LINGER_MS = 0.1;
export const WAL_GROUP_LINGER_MIN_APPENDS = 4;
/** A WAL file is sealed and settled into segments once it holds this much. */
export const WAL_FILE_BYTES_MAX = 64 * MiB;
/** After a failed WAL write the flusher probes for room again after this long, doubling up to the max. */
export const WAL_RECOVERY_RETRY_MS_MIN = 50;
export const WAL_RECOVERY_RETRY_MS_MAX = 2000;
/** A star waits this long at most for its flusher thread to start before it listens anyway (its
 *  appends then wait for the flusher, or fail with it). */
export const WAL_FLUSHER_START_MS_MAX = 30_000;
/** How often the WAL's up/down state is sampled for /metrics (the flusher logs outages itself). */
export const WAL_HEALTH_SAMPLE_MS = 250;
/** Even a quiet WAL is sealed and settled this long after its first record. */
export const WAL_SETTLE_AFTER_MS = 30_000;
/** A star alone looks at this many live streams per turn of the main thread when it makes idle ones
 *  dormant (each turn about 10-20 ms at most; the next waits behind pending I/O). */
export const DORMANT_RETIRE_SLICE_STREAMS = 4096;
/** Segment uploads one settle task runs at once (each holds one built segment; together they never
 *  hold more than the WAL file they come from). 64 against 16, two runs each of 100,000 one-record
 *  streams on the fs store (bench/streams-at-scale.ts): idle 49-54 s after the burst against 56-67 s,
 *  and RSS then 2.2-2.6 KiB a stream against 3.0-4.0. */
export const SETTLE_UPLOADS_CONCURRENT = 64;
/** A cluster star taking a stream over reads its unsettled chunks back this many at a time (in order
 *  of use): one at a time, a stream whose dead leader left 523 chunks took 24 s to load, and its
 *  producers waited that long with no ack and no status. */
export const CHUNK_READBACK_CONCURRENT = 16;
/** A cluster star's settle task carries the frames of as many streams as fit in this many bytes (a
 *  stream whose frames are larger goes alone): one copy of them is in flight to the settle thread. */
export const SETTLE_TASK_BYTES_MAX = 64 * 1024 * 1024;
/** A stream stays leased this long after its last append (spec: States, "the idle timeout runs"). */
export const LEASE_IDLE_MS = 10_000;
/** A cluster: a stream's lease runs this long past its last renewal (spec target: a stream accepts
 *  appends again within the lease TTL + 1 s of its leader's death). */
export const LEASE_TTL_MS = 3000;
/** The shortest --lease-ttl-ms a star accepts. A leader serves from memory for the TTL less
 *  LEASE_SAFETY_MARGIN_MS of each renewal, and renews every third of the TTL: at 1 s that is 750 ms
 *  of service a renewal, one PostgreSQL round trip every 333 ms per star. Shorter leases would spend
 *  the star on renewals (a 3 ms TTL renewed every millisecond), and one at or under the margin would
 *  never let its leader serve. */
export const LEASE_TTL_MS_MIN = 1000;
/** Leases are renewed this often (a third of the TTL), and a shorter --lease-ttl-ms every third of it:
 *  one renewal may fail or come late and the next still lands before the lease, less
 *  LEASE_SAFETY_MARGIN_MS, runs out. */
export const LEASE_RENEW_MS = 1000;
/** A leader stops serving from memory this long before its lease would run out by its own clock,
 *  so clock drift between it and PostgreSQL cannot let it serve past the lease. */
export const LEASE_SAFETY_MARGIN_MS = 250;
/** A star reports to the stars table this often … */
export const STAR_HEARTBEAT_MS = 500;
/** … and counts as gone once its last report is this old: its leases are waited out and taken. */
export const STAR_GONE_AFTER_MS = 2000;
/** A star whose object store has been down this long, while another live star reports reaching it,
 *  hands its streams over and takes no lease until its own is back (cluster-service.ts stepAside):
 *  long enough that a blip moves nothing, and that the other stars have probed theirs (below). */
export const OBJECTS_DOWN_HANDOFF_MS = 5000;
/** … and takes leases again once its store has answered this long without a failure (its probes go
 *  on meanwhile), so a store that answers one call in a few does not bring streams back and forth. */
export const OBJECTS_UP_RESUME_MS = 2000;
/** While any star reports its object store down, every star probes its own at each report (one PUT
 *  of a tiny object of its own, bounded by this), so what it reports is fresh: a store down for all
 *  moves nothing. */
export const OBJECTS_PROBE_MS_MAX = 1000;
/** A stopping star answers the requests already on their way for at most this long after it stops
 *  listening, before it shuts down (a rolling restart's in-flight appends are answered, not cut). */
export const SHUTDOWN_REQUESTS_WAIT_MS_MAX = 5000;
/** Once nothing is in flight, a stopping star still answers (with Connection: close) for this long
 *  before it closes the connections left: a keep-alive client between two requests sends its next one
 *  on a connection it believes open, and closing it under that request leaves its outcome unknown. */
export const SHUTDOWN_CONNECTION_GRACE_MS = 250;
/** Drain: a leader hands over each stream once nothing of it is in flight, checking this often … */
export const DRAIN_POLL_MS = 20;
/** … and after this long hands over the rest the way a reconfiguration hands a stream over: new
 *  appends refused (503, retry: the next leader takes them), those already sequenced committed and
 *  acked first, for at most this long again (Star.quiesce). */
export const DRAIN_HANDOFF_MS_MAX = 5000;
/** Drain or Decommission of another star waits this long for it to hold no lease, then answers
 *  UNAVAILABLE (the drain goes on; asking again waits again). */
export const DRAIN_WAIT_MS_MAX = 30_000;
/** How long the first append of a group waits for others before the commit starts, per class.
 *  While a group is in flight the next one gathers anyway (two are in flight at most), so under load
 *  the groups are as big as one PUT's time makes them, and a linger only adds to the ack. Standard:
 *  0, chosen with bench/cases/cluster-linger.ts (one cluster star on PostgreSQL + s3rver, 1-record
 *  appends; 0/1/2/5/10 ms): 0 ms had the lowest quiet ack p50 (5.3 ms against 5.7-14.6) and the most
 *  appends/s at 64 producers (5.8k against 4.0-4.9k); `--commit-linger-ms` overrides it. Express: 0,
 *  the class is for latency. A group holding an express frame lingers as express. */
export const COMMIT_LINGER_MS_STANDARD = 0;
export const COMMIT_LINGER_MS_EXPRESS = 0;
/** A group commit whose PostgreSQL statement got no answer (the connection dropped mid-statement)
 *  may have committed. Its appends are answered only once the star has asked PostgreSQL which of its
 *  chunks it holds, again every COMMIT_OUTCOME_RETRY_MS while it does not answer, for at most this
 *  long; past it they are refused as of unknown outcome. The next group commits wait meanwhile
 *  (commits are recorded in order), as they would fail against the same PostgreSQL. */
export const COMMIT_OUTCOME_WAIT_MS_MAX = 10_000;
export const COMMIT_OUTCOME_RETRY_MS = 250;
/** A group commit's object PUT gets this long in all (every attempt and the SDK's backoff), then its
 *  appends are refused as not stored (nothing was asked of PostgreSQL). Below PROXY_HEAD_MS_MAX, so
 *  an append a follower relayed hears that definite refusal rather than the hop's "may have been
 *  carried out"; an S3 that holds the PUT's connection open and silent (a black-holed route) would
 *  otherwise hold every group commit behind it for S3_ATTEMPTS_MAX request bounds. */
export const COMMIT_PUT_MS_MAX = 10_000;
/** A star that does not lead a stream reads its committed tail from object storage for a read or a
 *  tail query (cluster-service.ts settledViewOf) within this long, else asks the leader, which holds
 *  the tail in memory: an S3 gone silent costs such a read this, not S3_ATTEMPTS_MAX request bounds. */
export const COMMITTED_VIEW_GET_MS_MAX = 2000;
/** Any other object read by the main thread (a read's segments, a stream's chunks loaded back) gets
 *  this long in all, then answers 503: an S3 gone silent would otherwise hold a read for
 *  S3_ATTEMPTS_MAX request bounds, past a follower hop's PROXY_HEAD_MS_MAX. */
export const OBJECT_GET_MS_MAX = 10_000;
/** A star-to-star call (SettleStar on a drained peer) gets this long, then fails and is logged. It
 *  only nudges: the peer settles as it drains anyway, so the Drain answer is not held longer. */
export const PEER_CALL_MS_MAX = 10_000;
/** The auditor: settled segments waiting to be verified (past it, new ones are not queued) … */
export const AUDIT_VERIFY_QUEUE_MAX = 100_000;
/** … how many it takes per sweep … */
export const AUDIT_VERIFY_BATCH_MAX = 4096;
/** … checked in groups (one settle-thread task each) of at most this many segments or bytes … */
export const AUDIT_CHECK_GROUP_SEGMENTS_MAX = 256;
export const AUDIT_CHECK_GROUP_BYTES_MAX = 64 * 1024 * 1024;
/** … starting no new group after this long (a quarter of the one-second sweep) … */
export const AUDIT_VERIFY_RUN_MS_MAX = 250;
/** … how often it goes over every segment this star's streams name again (a scrub: bytes altered
 *  or lost after they were verified are found too; `--audit-scrub-interval`) … */
export const AUDIT_SCRUB_MS_DEFAULT = 60 * 60_000;
/** … and how many findings it keeps for the admin plane (the newest; every one is also logged). */
export const AUDIT_FINDINGS_KEPT_MAX = 1000;
/** Released objects are deleted this long after their release by default (`--read-grace`): at
 *  least twice the read plan validity, so a plan vended just before a trim stays good for its life. */
export const READ_GRACE_MS_DEFAULT = 10 * 60_000;
/** Chunk objects whose every chunk has settled are deleted this long after they were written. */
export const CHUNK_OBJECT_GRACE_MS = 60_000;
/** How often unreferenced chunk objects are collected, how many a batch (one DeleteObjects request),
 *  and for how long one run goes on taking batches (cluster/chunk-gc.ts). */
export const CHUNK_GC_MS = 10_000;
export const CHUNK_GC_BATCH_MAX = 256;
export const CHUNK_GC_RUN_MS_MAX = 5000;
/** How often a cluster star looks for vacant streams it is home to that hold committed, unsettled
 *  chunks (a leader died or handed over before settling them), and how many it leads and settles a
 *  run (cluster-service.ts sweepUnsettled). Without it they stay chunks until the stream's next
 *  write: read back from object storage by every read, and their objects never collected. */
export const UNSETTLED_SWEEP_MS = 5000;
export const UNSETTLED_SWEEP_STREAMS_MAX = 64;
/** … one run stops after this long (it goes on from where it stopped, in address order, next run) … */
export const UNSETTLED_SWEEP_RUN_MS_MAX = 2000;
/** … a stream that could not be led or loaded is left alone this long before it is tried again, and
 *  at most this many such streams are remembered (then the oldest is forgotten). */
export const UNSETTLED_SWEEP_RETRY_MS = 60_000;
/** Reads of a vacant stream's row and chunks, taken again while a settle moves its frontier between
 *  them, before the read answers 503 (settles a second apart: a second try almost always holds). */
export const COMMITTED_SNAPSHOT_ATTEMPTS_MAX = 3;
export const UNSETTLED_SWEEP_FAILED_KEPT_MAX = 4096;
/** A leader keeps an idle stream whose batches wait to settle at most this long past the idle
 *  timeout; then it lets it go all the same (core/star.ts idle). */
export const IDLE_UNSETTLED_HOLD_MS_MAX = 5 * 60_000;
/** One-hop proxy to a stream's leader: connections per leader, and how long one hop may take to
 *  answer its head (an SSE hop then streams for as long as the caller stays). */
export const PROXY_SOCKETS_PER_PEER_MAX = 256;
export const PROXY_HEAD_MS_MAX = 30_000;
/** While a hop is open (waiting for its answer, or relaying an event stream), the leader's heartbeat
 *  is looked at this often: a leader whose heartbeat went stale (frozen, cut off) is given up on then,
 *  not after PROXY_HEAD_MS_MAX, so the caller retries on the stream's next leader. */
export const PROXY_LEADER_CHECK_MS = 250;
/** Heap trim (src/ops/heap-trim.ts): checked this often; due once no append has been sequenced for
 *  HEAP_TRIM_QUIET_MS, at most once per HEAP_TRIM_INTERVAL_MS_MIN, only on a heap of at least
 *  HEAP_TRIM_HEAP_BYTES_MIN (a fresh star's is about 53 MB), and only when a stream went dormant, or
 *  V8's committed heap grew HEAP_TRIM_GROWTH_BYTES_MIN, since the last trim, or a collection left as
 *  much of old space free. */
export const HEAP_TRIM_CHECK_MS = 2000;
export const HEAP_TRIM_QUIET_MS = 10_000;
export const HEAP_TRIM_INTERVAL_MS_MIN = 10_000;
/** … and trims pause the main thread for at most this share of its time (a trim of a heap holding a
 *  million dormant streams takes longer: the next waits a hundred times its pause). */
export const HEAP_TRIM_CPU_SHARE_MAX = 0.01;
export const HEAP_TRIM_HEAP_BYTES_MIN = 64 * 2 ** 20;
export const HEAP_TRIM_GROWTH_BYTES_MIN = 16 * 2 ** 20;
/** Background retention sweep period. */
export const RETENTION_SWEEP_MS = 1000;
/** The postgres metadata backend gives up connecting after this long (start-up fails)… */
export const POSTGRES_CONNECT_MS_MAX = 10_000;
/** A lost PostgreSQL connection is tried again after this long, doubling up to the max. */
export const POSTGRES_RECONNECT_MS_MIN = 100;
export const POSTGRES_RECONNECT_MS_MAX = 5000;
/** … and PostgreSQL cancels any one of its statements that runs longer than this. */
export const POSTGRES_STATEMENT_MS_MAX = 30_000;
/** A statement whose answer has not come this long after it was sent is given up by the star itself,
 *  and its connection with it: PostgreSQL would have cancelled it by then (POSTGRES_STATEMENT_MS_MAX),
 *  so the connection is dead without having said so (a peer gone without FIN or RST, a black-holed
 *  route), and waiting on it would wedge every statement queued behind it. */
export const POSTGRES_ANSWER_MS_MAX = POSTGRES_STATEMENT_MS_MAX + 2000;
/** A statement still unanswered after this long marks the metadata store down (so /readyz says 503)
 *  until an answer comes: a wedged connection shows long before POSTGRES_ANSWER_MS_MAX gives it up. */
export const POSTGRES_ANSWER_SLOW_MS = 5000;
/** A statement still unanswered after this long has its connection looked at from a fresh one
 *  (pg_stat_activity): a server session that is idle is not working on it (the statement never
 *  arrived, or its answer was lost on the way), so the connection is dead and given up then,
 *  not at POSTGRES_ANSWER_MS_MAX. One still active (running, waiting on a lock) is waited for. The
 *  look gets POSTGRES_ALIVE_CHECK_MS_MAX to connect and answer; when it cannot, nothing is decided. */
export const POSTGRES_ANSWER_CHECK_MS = 10_000;
export const POSTGRES_ALIVE_CHECK_MS_MAX = 2000;
/** TCP keepalive on idle PostgreSQL connections starts after this long, so one whose peer vanished is
 *  found dead by the kernel, not only by the next statement's wait. */
export const POSTGRES_KEEPALIVE_IDLE_MS = 10_000;
/** A retrying loop's failure caused by a dependency being away is logged at most this often for each
 *  kind of work (core/outage-log.ts); the dependency's health logs the outage's start and end. */
export const OUTAGE_LOG_INTERVAL_MS = 10_000;
/** A statement PostgreSQL rolled back to break a deadlock is sent again at most this many times
 *  (pg-driver.ts isConflict), after a pause of up to POSTGRES_CONFLICT_PAUSE_MS_MAX. */
export const POSTGRES_CONFLICT_RETRIES_MAX = 3;
export const POSTGRES_CONFLICT_PAUSE_MS_MAX = 50;
/** The s3 object store gives one S3 request this long (connect, then the whole answer) … */
export const S3_REQUEST_MS_MAX = 30_000;
/** … and this many attempts, with the SDK's backoff, before the operation fails (a failed settle is
 *  retried in order by the star). */
export const S3_ATTEMPTS_MAX = 3;
/** A star starting while its S3 does not answer (or fails on its side) waits for it this long, asking
 *  every S3_BOOT_RETRY_MS, then refuses to start; one that answers no (credentials, bucket) refuses
 *  at once. */
export const S3_BOOT_WAIT_MS_MAX = 30_000;
export const S3_BOOT_RETRY_MS = 1000;
/** A star starting while PostgreSQL does not answer, is starting up or out of connections, or has its
 *  schema locked exclusively (a restore), waits for it this long, asking every
 *  POSTGRES_BOOT_RETRY_MS, then refuses to start; one that answers no (credentials, a missing
 *  database, a schema newer than the build) refuses at once. */
export const POSTGRES_BOOT_WAIT_MS_MAX = 30_000;
export const POSTGRES_BOOT_RETRY_MS = 1000;
/** After a failed journal write the local metadata store tries to recover after this long, doubling up to the max. */
export const META_JOURNAL_RETRY_MS_MIN = 50;
export const META_JOURNAL_RETRY_MS_MAX = 2000;
/** … and must first write and sync this much (then cut it away): proof there is room again. */
export const META_JOURNAL_PROBE_BYTES = 64 * KiB;
/** Metadata journal is compacted into a snapshot after this many entries or bytes (and once it is a
 *  quarter of the snapshot: storage/metadata/local-store.ts). */
export const META_JOURNAL_ENTRIES_MAX = 10_000;
export const META_JOURNAL_BYTES_MAX = 16 * MiB;

// --- Gateway -----------------------------------------------------------------------------------
/** Distinct subs whose svc_aux.limits buckets one Gateway keeps; idle ones are forgotten first. */
export const GATEWAY_SUBS_TRACKED_MAX = 100_000;
/** Upstream connections the Gateway keeps open per star (keep-alive) for requests, and the most in
 *  use at once. Subscriptions have a pool of their own (below), so they never hold these. */
export const GATEWAY_UPSTREAM_SOCKETS_MAX = 512;
/** Requests past the request pool's sockets wait for one, at most this many at once (and each at most
 *  GATEWAY_UPSTREAM_HEAD_MS_MAX); past it a request is 503 with Retry-After rather than a hang. */
export const GATEWAY_UPSTREAM_QUEUE_MAX = 1024;
/** Upstream connections for subscriptions (SSE), as many as one star serves; past it 503. */
export const GATEWAY_UPSTREAM_STREAM_SOCKETS_MAX = SSE_CONNECTIONS_PER_HOST_MAX;
/** Requests one tenant (sub) may have in the request pool at once: a quarter of it, so one tenant's
 *  slow uploads or slow answers never take the sockets every other tenant needs. Past it 429.
 *  `--gateway-requests-per-sub`. */
export const GATEWAY_REQUESTS_PER_SUB_MAX = 128;
/** Concurrent subscriptions per tenant when its token carries no `svc_aux.limits.connections`
 *  (`--gateway-connections-default`); tokens the exchange mints carry this value too. Past it 429. */
export const GATEWAY_CONNECTIONS_PER_SUB_DEFAULT = 64;
/** An upstream that has not answered a request's head in this long is given up (503). */
export const GATEWAY_UPSTREAM_HEAD_MS_MAX = 30_000;
/** An upstream star that refused a connection is tried last for this long: long enough that a dead
 *  star costs a burst of requests one refused connect each, not every request; short enough that a
 *  restarted star is back in rotation within a lease TTL or so. */
export const GATEWAY_UPSTREAM_DOWN_MS = 2000;
/** A request body is kept while it goes up, so it can be resent to the stream's leader after a 421
 *  or to the next star after a refused connect: up to the largest body a star accepts (a bigger one
 *  is refused by the star anyway, never redirected). */
export const GATEWAY_RESEND_BODY_BYTES_MAX = APPEND_BODY_BYTES_MAX;
/** Bytes of request bodies kept for resending across all requests at once. A body that finds the
 *  budget spent goes up uncopied; if its star then names another leader, the caller gets 503 with
 *  Retry-After rather than the Gateway holding unbounded memory. */
export const GATEWAY_RESEND_BYTES_TOTAL_MAX = 1024 * MiB;
/** The Gateway probes each upstream star's bridge (GET /healthz) this often, one probe at a time per
 *  star: a star that hangs without refusing connections (stopped, wedged, a black-holed route) is
 *  put last within about a period plus a timeout, instead of costing each request routed to it a
 *  full GATEWAY_UPSTREAM_HEAD_MS_MAX; a star that answers again is back as soon. */
export const GATEWAY_HEALTH_INTERVAL_MS = 1000;
/** A probe not answered in this long fails (a healthy bridge answers /healthz in milliseconds; this
 *  leaves room for a loaded star without letting a hung one look alive for long). */
export const GATEWAY_HEALTH_TIMEOUT_MS = 2000;
/** A star that failed this many health probes in a row is taken for wedged (stopped, hung): the
 *  requests sent to it before the first of them, still waiting for their answer's head, are given
 *  up at once (a safe method goes to the next star, any other is 503 with Retry-After) instead of
 *  each waiting out GATEWAY_UPSTREAM_HEAD_MS_MAX. Two probes span at least a period and two timeouts
 *  (about 5 s): longer than a lease's default TTL, so the stars have moved its leases by then, and
 *  more than one slow /healthz of a star that is only loaded. */
export const GATEWAY_UPSTREAM_WEDGED_PROBES = 2;
/** A stopping Gateway closes its connections and waits this long for the listener to let go before
 *  it destroys whatever sockets are left (a TLS handshake never finished, a peer that never closes):
 *  SIGTERM ends the process within a bound, not when the last client leaves. */
export const GATEWAY_CLOSE_WAIT_MS_MAX = 2000;
/** An event stream paced by its read budget reaches its caller in whole frames, so that a star that
 *  cuts the paused relay (its own stall bound) leaves the caller at a frame's end, where the Gateway
 *  can subscribe again from the last frame's id. The frame under way is held until it ends, up to
 *  this many bytes (a history batch is at most SSE_BATCH_BYTES_MAX of content, which its JSON
 *  encoding may double); a longer frame goes out as it comes and is not resumable until it ends. */
export const GATEWAY_PACED_FRAME_HOLD_BYTES_MAX = 2 * MiB;
/** Bytes held that way across all of a Gateway's paced streams; a stream that finds the budget spent
 *  passes its frame through as it comes. */
export const GATEWAY_PACED_FRAME_HOLD_BYTES_TOTAL_MAX = 256 * MiB;
/** A paced stream is subscribed again after its star's side ends at most this many times in a row
 *  without a new frame reaching the caller in between; then the caller's stream ends, and the caller
 *  resumes with its cursor as from any ended stream. */
export const GATEWAY_PACED_RESUMES_IDLE_MAX = 3;

// --- gRPC --------------------------------------------------------------------------------------
/** Protobuf framing of one AppendRecord beyond its content: its own tag and length, its timestamp,
 *  the tags and lengths of its body and a few headers. A batch whose records average more framing
 *  (thousands of one-byte headers) is refused by size, as an HTTP body over APPEND_BODY_BYTES_MAX is. */
export const GRPC_RECORD_FRAMING_BYTES_MAX = 64;
/** The largest Append / AppendSession request message: the spec's batch content, framing for its
 *  most records, and the envelope (address, fencing token, match_seq_num). grpc-js's
 *  `grpc.max_receive_message_length`, checked on the 5-byte message head before anything is buffered. */
export const GRPC_APPEND_MESSAGE_BYTES_MAX = BATCH_CONTENT_BYTES_MAX + APPEND_RECORDS_MAX * GRPC_RECORD_FRAMING_BYTES_MAX + CONTROL_BODY_BYTES_MAX;
/** An Append or AppendSession batch message at least this big is decoded, checked and encoded on a
 *  parse worker, as an HTTP append body past WORKER_PARSE_BYTES_MIN is. A quarter of that: protobuf
 *  packs a header in 7 bytes where JSON takes about 24, and the decoding cost follows the records and
 *  headers, so the two bound about the same 10,000 of them to the event loop. */
export const GRPC_WORKER_DECODE_BYTES_MIN = WORKER_PARSE_BYTES_MIN / 4;
/** Every other request message (control verbs, reads, the exchange): as small as HTTP's control bodies. */
export const GRPC_CONTROL_MESSAGE_BYTES_MAX = CONTROL_BODY_BYTES_MAX;
/** A gRPC Read page's content when the request leaves max_bytes at 0: under the 4 MiB receive limit
 *  grpc-js, grpc-go, grpcio and grpcurl keep by default, with 1 MiB left for the framing of up to
 *  READ_RECORDS_MAX records (128 B each). A stock client then reads any stream without raising its
 *  limit (a page over it fails as RESOURCE_EXHAUSTED, the spec's retryable 429, so a generic retry
 *  loops); one that raised it asks for up to READ_BYTES_MAX explicitly. HTTP's 0 is READ_BYTES_MAX. */
export const GRPC_READ_BYTES_DEFAULT = 3 * MiB;
/** A read page (HTTP, gRPC, an event stream's history batch) counts each record's headers beyond
 *  their names and values: this many bytes each (the two lengths a frame stores, and about what
 *  protobuf and JSON add), so a page of records made of many tiny headers stays within its byte cap on
 *  the wire (a stock gRPC client's 4 MiB above all) ... */
export const READ_HEADER_METER_BYTES = 8;
/** ... and holds at most this many headers (8 for each of READ_RECORDS_MAX records; one record
 *  always serves). Every header is an object to decode and encode: records of 1,024 one-byte headers
 *  made an 8 MiB page 8 million of them, 36 s of the event loop and gigabytes of heap (a star died
 *  of it under six such reads at once). */
export const READ_PAGE_HEADERS_MAX = 65_536;
/** The largest response message: a Read page of READ_BYTES_MAX with room for its framing. */
export const GRPC_SEND_MESSAGE_BYTES_MAX = 128 * MiB;
/** The star pings each gRPC connection this often (HTTP/2 PING; grpc-js keepalive) and drops one
 *  whose peer has not answered within GRPC_KEEPALIVE_TIMEOUT_MS (--grpc-keepalive-ms): a client
 *  machine that vanished, or a connection Node's HTTP/2 stopped reading without closing (with
 *  grpc-go, a header block past nghttp2's limits left the socket open and unread, a Subscribe on
 *  it silently stalled), no longer holds its calls, subscriptions and socket until the star stops.
 *  A connection closing gracefully (its client's GOAWAY, the star's own drain) is not pinged: its
 *  calls finish as before. */
export const GRPC_KEEPALIVE_PING_MS = 60_000;
/** The shortest --grpc-keepalive-ms taken: a ping every few ms per connection is load, not a check. */
export const GRPC_KEEPALIVE_PING_MS_MIN = 100;
/** How long a keepalive PING may go unanswered: GRPC_KEEPALIVE_TIMEOUT_MS, or twice a shorter ping
 *  period, but never under GRPC_KEEPALIVE_TIMEOUT_MS_MIN (a loaded machine's event loop can stall
 *  for a few hundred ms, and a live peer must not be dropped for it). */
export const GRPC_KEEPALIVE_TIMEOUT_MS = 20_000;
export const GRPC_KEEPALIVE_TIMEOUT_MS_MIN = 2_000;
/** The header list (a call's metadata, uncompressed) the gRPC listener advertises it takes, in its
 *  HTTP/2 SETTINGS (SETTINGS_MAX_HEADER_LIST_SIZE). grpc-js advertises none, so clients sent any size,
 *  and one field past nghttp2's HPACK ceiling (64 KiB) wedged the connection; with it advertised,
 *  grpc-go refuses such a call itself, before sending it ("header list size to send violates the
 *  maximum size … set by server"), and a client that sends one anyway has that call refused on its
 *  own stream (RST_STREAM ENHANCE_YOUR_CALM), the connection serving on. Node's documented default,
 *  and four times C-core's hard default (16 KiB). */
export const GRPC_HEADER_LIST_BYTES_MAX = 64 * KiB;
/** grpc-js's own log lines: each kind (its first GRPC_LOG_KIND_CHARS characters) at most once in
 *  this long, so a client cannot fill the star's log with a line grpc-js writes on every call it
 *  shapes (`Failed to add metadata entry …` for a header value it drops). */
export const GRPC_LOG_REPEAT_MS = 60_000;
export const GRPC_LOG_KIND_CHARS = 32;
/** Kinds tracked at once; past it the oldest is forgotten (its next line is written). */
export const GRPC_LOG_KINDS_MAX = 256;
/** Request-message bytes received or being received and not yet answered, for the whole star: a
 *  message is charged its declared length when its head arrives, before its body is buffered, and
 *  past the budget it is refused with RESOURCE_EXHAUSTED (429's code). */
export const GRPC_REQUEST_BYTES_IN_FLIGHT_MAX = 512 * MiB;
/** … and per tenant (a token's `sub`): one full batch and change, so a tenant cannot hold more than a
 *  quarter of the star's budget, and the others keep appending. */
export const GRPC_REQUEST_BYTES_IN_FLIGHT_PER_TENANT_MAX = 128 * MiB;
/** … and per client address for the verbs a caller may send unauthenticated (ExchangeToken, and the
 *  standard health and reflection services). Every other verb's caller is authenticated from its
 *  head before one byte of its message is read. */
export const GRPC_UNAUTHENTICATED_BYTES_IN_FLIGHT_PER_ADDRESS_MAX = 1 * MiB;
/** Open grpc.health.v1.Health/Watch calls at once (each holds a stream); past it RESOURCE_EXHAUSTED. */
export const GRPC_HEALTH_WATCHES_MAX = 1024;
/** Health watchers learn of a change of the star's readiness within this long (one poll for all). */
export const GRPC_HEALTH_WATCH_POLL_MS = 1000;

// --- Authentication ------------------------------------------------------------------------------
/** SVCD_ROOT_SECRET shorter than this refuses to boot: the root seed is svc:admin, its hash is an
 *  unsalted SHA-256, so a short secret can be guessed offline from a leaked hash (and online, at
 *  the exchange's throttled rate below). 32 bytes is what `openssl rand -hex 16` prints. */
export const ROOT_SECRET_BYTES_MIN = 32;
/** Failed exchanges (unknown key id or wrong secret) allowed per key id in a burst, and the rate at
 *  which that allowance refills. While it is spent every exchange for the key id is 429: at one
 *  guess per second a 32-byte secret is out of reach. The refill of at least one per second keeps
 *  the dispatcher's `Retry-After: 1` true. */
export const EXCHANGE_FAILURES_PER_KEY_ID_BURST = 10;
export const EXCHANGE_FAILURES_PER_KEY_ID_PER_S = 1;
/** The same per client address, where a transport sees the caller's own address (gRPC, the
 *  Gateway); a star's data bridge serves callers inside the trust domain, often all behind one
 *  Gateway address, so it throttles by key id only. */
export const EXCHANGE_FAILURES_PER_ADDRESS_BURST = 20;
export const EXCHANGE_FAILURES_PER_ADDRESS_PER_S = 1;
/** Keys (key ids, addresses) one throttle remembers; the least recently failed are forgotten first. */
export const EXCHANGE_THROTTLE_KEYS_MAX = 100_000;
/** `svc_aux.limits.connections` stamped on tokens the exchange mints (`--exchange-token-connections`). */
export const EXCHANGE_TOKEN_CONNECTIONS_DEFAULT = GATEWAY_CONNECTIONS_PER_SUB_DEFAULT;

// --- SSE --------------------------------------------------------------------------------------
/** A subscriber's single batch in flight holds at most this many records / bytes. */
export const SSE_BATCH_RECORDS_MAX = 1000;
export const SSE_BATCH_BYTES_MAX = 1 * MiB;
export const SSE_RETRY_AFTER_S = 1;
/** The fan-out writes to at most this many subscriber sockets per event-loop turn, then yields
 *  (setImmediate) so appends and their acks are read and answered between slices. One socket write
 *  costs about 6–25 µs here, so a slice holds the loop for about 0.5–1.5 ms. Swept on 2026-11-26
 *  (4096 subscribers on one stream, 20 batches/s, load 1–2.6, three runs each): producer ack p99 7–10
 *  ms at 32, 9–15 at 64, 10–17 at 128, 25–27 at 512, 44–52 at 4096, while delivery p99 was 69–95 ms
 *  at 32 and 57–84 from 64 up. Swept again with cohorts on 2026-11-28 (both SSE cells, a slower
 *  host where one thread cannot keep up with 82,000 writes a second, load 1.5–2.3, 2–6 runs each):
 *  ack p50 3.1–3.8 ms at 32, 4.2–4.8 at 64, 5.3–6.4 at 128, and ack p99 about 15, 16 and 21. The
 *  CPU a delivery did not move (11.4–11.7 µs on one stream, 13.5–14.1 across), nor the one-stream
 *  delivery p99; across streams it was 928–1,087 ms at 64 against 836–1,062 at 128 (four and six
 *  runs), a few per cent worse if anything. 64 trades that for a fifth off the producer's acks. */
export const SSE_SOCKETS_PER_TURN_MAX = 64;
/** A subscriber that is behind by several committed batches gets them in one corked write (one
 *  syscall) up to this many bytes of frames; the rest waits for its next turn. */
export const SSE_COALESCE_BYTES_MAX = 64 * KiB;

// --- Durable Streams surface (src/api/ds/limits.ts holds the rest) ----------------------------------
/** A DS long-poll at the tail answers 204 after this long without data (--ds-long-poll-ms). */
export const DS_LONG_POLL_MS = 20_000;
