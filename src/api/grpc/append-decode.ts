// The request decoders of Append and AppendSession, written by hand: the two messages whose size
// grows with a producer's batch. protobufjs (through @grpc/proto-loader) builds a message object and
// then a second, plain one for every record and header, about 1.5 µs a record and 2.5 µs a header on
// this machine: a within-caps Append of 65,536 one-byte records held the event loop for 100 ms, one of
// a million small headers for 3 s, every stream's acks waiting behind it. These read the wire once into
// the loader's own output shapes (LOADER_OPTIONS in proto.ts: snake_case, 64-bit integers as numbers,
// bytes as Buffers over the message, defaults for scalars, `request` naming the oneof's member), so
// the handlers and the generated types stay as they are. test/grpc/append-decode.test.ts decodes random
// messages both ways and compares.
//
// A message of at least `offThreadBytesMin` (GRPC_WORKER_DECODE_BYTES_MIN, when the star has parse
// workers) is read shallowly: its address, match_seq_num and fencing token, the records skipped over
// and left for a parse worker, which decodes the whole message again (workers/parse-task.ts). The
// message's bytes ride along on the decoded object (offThreadBytes).
//
// Protobuf's rules kept here: fields in any order, a repeated singular field's last value wins (of a
// oneof, the member read last), unknown fields (any wire type, groups included) are skipped, a known
// field with another wire type is skipped as unknown (as protobuf's C++ and Java parsers do). An
// embedded message sent twice replaces the first, as protobufjs does (protobuf would merge them; no
// encoder splits AppendSessionOpen or a batch). What is refused (thrown, which admission answers
// INVALID_ARGUMENT): a truncated varint, length or fixed field, a length past its message, a field
// number 0, wire types 6 and 7, an end-group without its start, groups nested past GROUP_DEPTH_MAX,
// more than MESSAGE_FIELDS_MAX fields at the top of a message or batch.

import type { AppendRecord__Output } from '../../gen/svc/v1/AppendRecord.ts';
import type { AppendRequest__Output } from '../../gen/svc/v1/AppendRequest.ts';
import type { AppendSessionBatch__Output } from '../../gen/svc/v1/AppendSessionBatch.ts';
import type { AppendSessionOpen__Output } from '../../gen/svc/v1/AppendSessionOpen.ts';
import type { AppendSessionRequest__Output } from '../../gen/svc/v1/AppendSessionRequest.ts';
import type { Header__Output } from '../../gen/svc/v1/Header.ts';
import { ServiceError } from '../../protocol/errors.ts';
import { APPEND_RECORDS_MAX } from '../../protocol/limits.ts';

/** Unknown groups nest at most this deep (protobuf's own parsers stop at 100). */
const GROUP_DEPTH_MAX = 100;
/** Fields at the top of an append message or a session batch: a batch's most records and room for
 *  its other fields. A message with more (unknown fields by the million, a singular field repeated)
 *  is refused on reaching it, so the event loop's shallow read of a large message stays as short as a
 *  full batch's (about 10 ms), where walking 100 MiB of tiny fields took it 240-500 ms. */
export const MESSAGE_FIELDS_MAX = APPEND_RECORDS_MAX + 64;

const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const START_GROUP = 3;
const END_GROUP = 4;
const FIXED32 = 5;

const TWO_POW_32 = 4_294_967_296;
const EMPTY: Buffer = Buffer.alloc(0);

class WireError extends Error {}

/** A position in one message's bytes. Sub-messages are read in place, bounded by their length. */
class Reader {
  pos = 0;

  constructor(private readonly buf: Buffer) {}

  /** A tag or a length: a varint of at most 10 bytes; past 2^53 it cannot be in range anyway. */
  varint(end: number): number {
    const b = this.buf;
    let p = this.pos;
    if (p >= end) throw truncated();
    let c = b[p++];
    if (c < 0x80) {
      this.pos = p;
      return c;
    }
    let v = c & 0x7f;
    let scale = 0x80;
    for (let i = 1; i < 10; i++) {
      if (p >= end) throw truncated();
      c = b[p++];
      v += (c & 0x7f) * scale;
      if (c < 0x80) {
        this.pos = p;
        return v;
      }
      scale *= 0x80;
    }
    throw new WireError('a varint longer than 10 bytes');
  }

  /** A 64-bit varint as a number, as protobufjs's LongBits.toNumber gives it (two's complement when
   *  `signed`). */
  varint64(end: number, signed: boolean): number {
    const b = this.buf;
    let p = this.pos;
    let lo = 0;
    let hi = 0;
    let c = 0;
    let i = 0;
    for (; i < 4; i++) {
      if (p >= end) throw truncated();
      c = b[p++];
      lo = (lo | ((c & 0x7f) << (i * 7))) >>> 0;
      if (c < 0x80) break;
    }
    if (c >= 0x80) {
      if (p >= end) throw truncated();
      c = b[p++];
      lo = (lo | ((c & 0x7f) << 28)) >>> 0;
      hi = (c & 0x7f) >> 4;
      for (i = 0; c >= 0x80 && i < 5; i++) {
        if (p >= end) throw truncated();
        c = b[p++];
        hi = (hi | ((c & 0x7f) << (i * 7 + 3))) >>> 0;
      }
      if (c >= 0x80) throw new WireError('a varint longer than 10 bytes');
    }
    this.pos = p;
    if (signed && hi >>> 31) {
      lo = (~lo + 1) >>> 0;
      hi = ~hi >>> 0;
      if (lo === 0) hi = (hi + 1) >>> 0;
      return -(lo + hi * TWO_POW_32);
    }
    return lo + hi * TWO_POW_32;
  }

  /** The end of a length-delimited field that starts here. */
  lengthEnd(end: number): number {
    const n = this.varint(end);
    const e = this.pos + n;
    if (e > end) throw truncated();
    return e;
  }

  bytes(end: number): Buffer {
    const e = this.lengthEnd(end);
    const s = this.pos;
    this.pos = e;
    return s === e ? EMPTY : this.buf.subarray(s, e);
  }

  string(end: number): string {
    const e = this.lengthEnd(end);
    const s = this.pos;
    this.pos = e;
    return this.buf.toString('utf8', s, e);
  }

  /** The next field's tag, the `n`-th of its message (MESSAGE_FIELDS_MAX). */
  fieldTag(end: number, n: number): number {
    if (n >= MESSAGE_FIELDS_MAX) throw new WireError(`more than ${MESSAGE_FIELDS_MAX} fields in one message (a batch holds at most ${APPEND_RECORDS_MAX} records)`);
    return this.tag(end);
  }

  tag(end: number): number {
    const t = this.varint(end);
    if (t >>> 3 === 0 || t > 0xffff_ffff) throw new WireError(`invalid tag ${t}`);
    return t;
  }

  /** Skips the value of a field whose tag was just read. */
  skip(tag: number, end: number, depth = 0): void {
    switch (tag & 7) {
      case VARINT:
        this.varint64(end, false);
        return;
      case FIXED64:
        this.advance(8, end);
        return;
      case LEN:
        this.pos = this.lengthEnd(end);
        return;
      case FIXED32:
        this.advance(4, end);
        return;
      case START_GROUP: {
        if (depth >= GROUP_DEPTH_MAX) throw new WireError(`groups nested deeper than ${GROUP_DEPTH_MAX}`);
        for (;;) {
          const t = this.tag(end);
          if ((t & 7) === END_GROUP) {
            if (t >>> 3 !== tag >>> 3) throw new WireError('an end-group of another group');
            return;
          }
          this.skip(t, end, depth + 1);
        }
      }
      case END_GROUP:
        throw new WireError('an end-group without its start');
      default:
        throw new WireError(`invalid wire type ${tag & 7}`);
    }
  }

  private advance(n: number, end: number): void {
    if (this.pos + n > end) throw truncated();
    this.pos += n;
  }
}

function truncated(): WireError {
  return new WireError('a field runs past the end of its message');
}

/** Tags of the fields read here: field number << 3 | wire type. */
const T = {
  header: { name: (1 << 3) | LEN, value: (2 << 3) | LEN },
  record: { timestamp_ms: (1 << 3) | VARINT, headers: (2 << 3) | LEN, body: (3 << 3) | LEN },
  append: { bucket: (1 << 3) | LEN, key: (2 << 3) | LEN, records: (3 << 3) | LEN, match_seq_num: (4 << 3) | VARINT, fencing_token: (5 << 3) | LEN },
  session: { open: (1 << 3) | LEN, batch: (2 << 3) | LEN },
  open: { bucket: (1 << 3) | LEN, key: (2 << 3) | LEN, fencing_token: (3 << 3) | LEN },
  batch: { records: (1 << 3) | LEN, match_seq_num: (2 << 3) | VARINT },
} as const;

function header(r: Reader, end: number): Header__Output {
  let name = EMPTY;
  let value = EMPTY;
  while (r.pos < end) {
    const t = r.tag(end);
    if (t === T.header.name) name = r.bytes(end);
    else if (t === T.header.value) value = r.bytes(end);
    else r.skip(t, end);
  }
  return { name, value };
}

function record(r: Reader, end: number): AppendRecord__Output {
  let timestamp: number | undefined;
  const headers: Header__Output[] = [];
  let body = EMPTY;
  while (r.pos < end) {
    const t = r.tag(end);
    if (t === T.record.headers) {
      const e = r.lengthEnd(end);
      headers.push(header(r, e));
    } else if (t === T.record.body) body = r.bytes(end);
    else if (t === T.record.timestamp_ms) timestamp = r.varint64(end, true);
    else r.skip(t, end);
  }
  return timestamp === undefined ? { headers, body } : { timestamp_ms: timestamp, headers, body };
}

/** One embedded message read by `read` over its own length. */
function embedded<M>(r: Reader, end: number, read: (r: Reader, end: number) => M): M {
  const e = r.lengthEnd(end);
  return read(r, e);
}

/** Where a shallow read leaves a message's bytes for the parse worker. */
const OFF_THREAD = Symbol('svcd.grpc.offThread');
type Deferred = { [OFF_THREAD]?: Buffer };

/** The whole message's bytes when its records were left for a parse worker: on an AppendRequest, or
 *  on the `batch` of an AppendSessionRequest. */
export function offThreadBytes(decoded: object): Buffer | undefined {
  return (decoded as Deferred)[OFF_THREAD];
}

/** Records read into `out`, or (shallow) skipped over. */
function records(r: Reader, end: number, out: AppendRecord__Output[], shallow: boolean): void {
  if (shallow) r.pos = r.lengthEnd(end);
  else out.push(embedded(r, end, record));
}

function appendRequest(r: Reader, end: number, shallow = false): AppendRequest__Output {
  const out: AppendRequest__Output = { bucket: '', key: EMPTY, records: [] };
  for (let n = 0; r.pos < end; n++) {
    const t = r.fieldTag(end, n);
    if (t === T.append.records) records(r, end, out.records, shallow);
    else if (t === T.append.bucket) out.bucket = r.string(end);
    else if (t === T.append.key) out.key = r.bytes(end);
    else if (t === T.append.match_seq_num) out.match_seq_num = r.varint64(end, false);
    else if (t === T.append.fencing_token) out.fencing_token = r.string(end);
    else r.skip(t, end);
  }
  return out;
}

function sessionOpen(r: Reader, end: number): AppendSessionOpen__Output {
  const out: AppendSessionOpen__Output = { bucket: '', key: EMPTY };
  while (r.pos < end) {
    const t = r.tag(end);
    if (t === T.open.bucket) out.bucket = r.string(end);
    else if (t === T.open.key) out.key = r.bytes(end);
    else if (t === T.open.fencing_token) out.fencing_token = r.string(end);
    else r.skip(t, end);
  }
  return out;
}

function sessionBatch(r: Reader, end: number, shallow: boolean): AppendSessionBatch__Output {
  const out: AppendSessionBatch__Output = { records: [] };
  for (let n = 0; r.pos < end; n++) {
    const t = r.fieldTag(end, n);
    if (t === T.batch.records) records(r, end, out.records, shallow);
    else if (t === T.batch.match_seq_num) out.match_seq_num = r.varint64(end, false);
    else r.skip(t, end);
  }
  return out;
}

function sessionRequest(r: Reader, end: number, shallow = false): AppendSessionRequest__Output {
  // A oneof: the member read last is the one set.
  let out: AppendSessionRequest__Output = {};
  for (let n = 0; r.pos < end; n++) {
    const t = r.fieldTag(end, n);
    if (t === T.session.open) out = { open: embedded(r, end, sessionOpen), request: 'open' };
    else if (t === T.session.batch) out = { batch: embedded(r, end, (rr, e) => sessionBatch(rr, e, shallow)), request: 'batch' };
    else r.skip(t, end);
  }
  return out;
}

/** svc.v1.AppendRequest from its wire bytes; throws on malformed protobuf. */
export function decodeAppendRequest(bytes: Buffer): AppendRequest__Output {
  return appendRequest(new Reader(bytes), bytes.length);
}

/** svc.v1.AppendSessionRequest from its wire bytes; throws on malformed protobuf. */
export function decodeAppendSessionRequest(bytes: Buffer): AppendSessionRequest__Output {
  return sessionRequest(new Reader(bytes), bytes.length);
}

/** Which append message a parse worker is given: an Append request or an AppendSession batch. */
export type GrpcAppendMessage = 'append' | 'session';

const METHOD_PATH: Record<GrpcAppendMessage, string> = {
  append: '/svc.v1.DataService/Append',
  session: '/svc.v1.DataService/AppendSession',
};

/** The refusal of a message that is not valid protobuf, worded as admission.ts words grpc-js's. */
export function notValidProtobuf(message: GrpcAppendMessage, reason: string): ServiceError {
  return new ServiceError('invalid_argument', `a request message of ${METHOD_PATH[message]} is not valid protobuf: ${reason}`);
}

/** The records of a whole append message (an Append request, or an AppendSession message's batch),
 *  what a parse worker reads of a message the event loop read shallowly; throws notValidProtobuf. */
export function wholeRecords(bytes: Buffer, message: GrpcAppendMessage): AppendRecord__Output[] {
  try {
    return message === 'append' ? decodeAppendRequest(bytes).records : decodeAppendSessionRequest(bytes).batch?.records ?? [];
  } catch (err) {
    throw notValidProtobuf(message, (err as Error).message);
  }
}

export interface AppendDecoders {
  append(bytes: Buffer): AppendRequest__Output;
  /** Never throws: a message that is not valid protobuf comes back empty, marked (undecodable), for
   *  the session to refuse in its turn. */
  session(bytes: Buffer): AppendSessionRequest__Output;
}

/** Where the session decoder leaves why a message could not be read. */
const UNDECODABLE = Symbol('svcd.grpc.undecodable');
type Marked = { [UNDECODABLE]?: string };

/** Why an AppendSession message is not valid protobuf (undefined: it is). A session refuses such a
 *  message after the acks of the batches before it, as any refused batch; grpc-js would have ended
 *  the call at once (admission.ts answers a throwing decoder INVALID_ARGUMENT), leaving the fate of
 *  batches already handed to the core untold. */
export function undecodable(msg: AppendSessionRequest__Output): string | undefined {
  return (msg as Marked)[UNDECODABLE];
}

/** The two request decoders a server registers: messages of at least `offThreadBytesMin` are read
 *  shallowly, their records left for a parse worker (absent: every message is read whole). */
export function appendDecoders(offThreadBytesMin = Number.POSITIVE_INFINITY): AppendDecoders {
  return {
    append(bytes) {
      if (bytes.length < offThreadBytesMin) return decodeAppendRequest(bytes);
      const out: AppendRequest__Output & Deferred = appendRequest(new Reader(bytes), bytes.length, true);
      out[OFF_THREAD] = bytes;
      return out;
    },
    session(bytes) {
      try {
        if (bytes.length < offThreadBytesMin) return decodeAppendSessionRequest(bytes);
        const out = sessionRequest(new Reader(bytes), bytes.length, true);
        if (out.batch) (out.batch as Deferred)[OFF_THREAD] = bytes;
        return out;
      } catch (err) {
        const out: AppendSessionRequest__Output & Marked = {};
        out[UNDECODABLE] = err instanceof Error ? err.message : String(err);
        return out;
      }
    },
  };
}
