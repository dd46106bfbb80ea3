// A tiny hand-written codec for google.rpc.Status, the message gRPC carries in the
// `grpc-status-details-bin` trailer (https://google.aip.dev/193):
//
//   message Status { int32 code = 1; string message = 2; repeated google.protobuf.Any details = 3; }
//   message Any    { string type_url = 1; bytes value = 2; }
//
// Only what those two messages need: varints and length-delimited fields. The decoder skips unknown
// fields so a newer peer's additions never break it.

/** `type_url` prefix of every packed detail. */
export const TYPE_URL_PREFIX = 'type.googleapis.com/';

/** The trailer key that carries a serialized google.rpc.Status. */
export const STATUS_DETAILS_KEY = 'grpc-status-details-bin';

export interface AnyMessage {
  type_url: string;
  value: Uint8Array;
}

export interface RpcStatus {
  code: number;
  message: string;
  details: AnyMessage[];
}

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;
const WIRE_FIXED32 = 5;
/** Status, Any: nothing here nests deeper or grows larger than a trailer allows. */
const STATUS_BYTES_MAX = 64 * 1024;

function varint(value: number): number[] {
  const out: number[] = [];
  let v = value;
  while (v > 0x7f) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

function lenField(field: number, bytes: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([(field << 3) | WIRE_LEN, ...varint(bytes.length)]), bytes]);
}

function encodeAny(any: AnyMessage): Buffer {
  return Buffer.concat([lenField(1, Buffer.from(any.type_url, 'utf8')), lenField(2, any.value)]);
}

export function encodeRpcStatus(status: RpcStatus): Buffer {
  const parts: Buffer[] = [];
  if (status.code !== 0) {
    // int32: negative values would take ten bytes; gRPC codes are 0..16.
    if (!Number.isInteger(status.code) || status.code < 0) throw new RangeError(`bad status code ${status.code}`);
    parts.push(Buffer.from([(1 << 3) | WIRE_VARINT, ...varint(status.code)]));
  }
  if (status.message !== '') parts.push(lenField(2, Buffer.from(status.message, 'utf8')));
  for (const d of status.details) parts.push(lenField(3, encodeAny(d)));
  return Buffer.concat(parts);
}

class Reader {
  pos = 0;
  constructor(private readonly buf: Uint8Array) {}
  get done(): boolean { return this.pos >= this.buf.length; }
  varint(): number {
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.buf.length) throw new RangeError('truncated varint');
      const b = this.buf[this.pos++];
      result += (b & 0x7f) * scale;
      if (b < 0x80) return result;
      scale *= 0x80;
    }
    throw new RangeError('varint too long');
  }
  bytes(): Uint8Array {
    const n = this.varint();
    if (this.pos + n > this.buf.length) throw new RangeError('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
  skip(wire: number): void {
    if (wire === WIRE_VARINT) this.varint();
    else if (wire === WIRE_FIXED64) this.pos += 8;
    else if (wire === WIRE_LEN) this.bytes();
    else if (wire === WIRE_FIXED32) this.pos += 4;
    else throw new RangeError(`unsupported wire type ${wire}`);
  }
}

function decodeAny(buf: Uint8Array): AnyMessage {
  const r = new Reader(buf);
  const any: AnyMessage = { type_url: '', value: new Uint8Array(0) };
  while (!r.done) {
    const tag = r.varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 1 && wire === WIRE_LEN) any.type_url = Buffer.from(r.bytes()).toString('utf8');
    else if (field === 2 && wire === WIRE_LEN) any.value = r.bytes();
    else r.skip(wire);
  }
  return any;
}

/** Parses a google.rpc.Status; throws RangeError on malformed input. */
export function decodeRpcStatus(buf: Uint8Array): RpcStatus {
  if (buf.length > STATUS_BYTES_MAX) throw new RangeError('status too large');
  const r = new Reader(buf);
  const status: RpcStatus = { code: 0, message: '', details: [] };
  while (!r.done) {
    const tag = r.varint();
    const field = Math.floor(tag / 8);
    const wire = tag & 7;
    if (field === 1 && wire === WIRE_VARINT) status.code = r.varint();
    else if (field === 2 && wire === WIRE_LEN) status.message = Buffer.from(r.bytes()).toString('utf8');
    else if (field === 3 && wire === WIRE_LEN) status.details.push(decodeAny(r.bytes()));
    else r.skip(wire);
  }
  return status;
}
