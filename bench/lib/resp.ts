// A minimal RESP2 client for the Redis peer: commands go out as arrays of bulk strings, replies are
// parsed from the bytes received. The connection is lib/serial-conn.ts, as lib/http1.ts's is: one
// command in flight, read in net's `onread` mode, so the Redis driver spends about the CPU per request
// the svcd load generator spends and the comparison is between servers, not clients.
import type { Socket } from 'node:net';
import { connectSerial, SerialConn } from './serial-conn.ts';

/** An error reply (`-ERR …`). A value, not a thrown error: the caller counts it. */
export class RespError {
  constructor(readonly message: string) {}
}

export type RespReply = string | number | null | RespError | RespReply[];

/** One command as a RESP array of bulk strings. */
export function encodeCommand(args: readonly (string | Buffer)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`, 'latin1')];
  for (const a of args) {
    const b = typeof a === 'string' ? Buffer.from(a) : a;
    parts.push(Buffer.from(`$${b.length}\r\n`, 'latin1'), b, Buffer.from('\r\n', 'latin1'));
  }
  return Buffer.concat(parts);
}

const CR = 13;

/** Parses the reply that starts at `at`; undefined while its last byte has not arrived. Bulk strings
 *  are decoded as UTF-8 (a stream id, a config value or INFO text). */
export function parseReply(buf: Buffer, at: number): { value: RespReply; end: number } | undefined {
  const eol = buf.indexOf(CR, at + 1);
  if (eol < 0 || eol + 1 >= buf.length) return undefined;
  const line = buf.toString('latin1', at + 1, eol);
  const next = eol + 2;
  switch (buf[at]) {
    case 0x2b: return { value: line, end: next }; // '+' simple string
    case 0x2d: return { value: new RespError(line), end: next }; // '-' error
    case 0x3a: return { value: Number(line), end: next }; // ':' integer
    case 0x24: { // '$' bulk string, $-1 for nil
      const len = Number(line);
      if (len < 0) return { value: null, end: next };
      if (buf.length < next + len + 2) return undefined;
      return { value: buf.toString('utf8', next, next + len), end: next + len + 2 };
    }
    case 0x2a: { // '*' array, *-1 for nil
      const n = Number(line);
      if (n < 0) return { value: null, end: next };
      const items: RespReply[] = [];
      let p = next;
      for (let i = 0; i < n; i++) {
        const r = parseReply(buf, p);
        if (!r) return undefined;
        items.push(r.value);
        p = r.end;
      }
      return { value: items, end: p };
    }
    default:
      throw new Error(`RESP: unexpected type byte 0x${(buf[at] ?? 0).toString(16)}`);
  }
}

/** A whole reply and its bytes on the wire. */
export interface RespAnswer { reply: RespReply; wireBytes: number }

export class RespConn extends SerialConn<RespAnswer> {
  private pending: Buffer | undefined;

  private constructor(sock: Socket) {
    super(sock, 'RespConn');
  }

  static open(host: string, port: number): Promise<RespConn> {
    return connectSerial(host, port, (sock) => new RespConn(sock));
  }

  /** One command and its reply; an error reply rejects. */
  call(...args: (string | Buffer)[]): Promise<RespReply> {
    return new Promise((resolve, reject) => this.send(encodeCommand(args), (err, a) => {
      if (err || !a) reject(err ?? new Error('connection closed without a reply'));
      else if (a.reply instanceof RespError) reject(new Error(`redis ${String(args[0])}: ${a.reply.message}`));
      else resolve(a.reply);
    }));
  }

  protected onData(chunk: Buffer): void {
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    let r: { value: RespReply; end: number } | undefined;
    try { r = parseReply(buf, 0); } catch (err) { this.sock.destroy(); this.fail(err as Error); return; }
    if (!r) { this.pending = buf; return; }
    // Bytes past the reply mean a protocol error (one command in flight): keep them for the next
    // read rather than drop them silently, so the next reply shows the mismatch.
    this.pending = r.end < buf.length ? buf.subarray(r.end) : undefined;
    this.deliver({ reply: r.value, wireBytes: r.end });
  }
}
