// A minimal keep-alive HTTP/1.1 client over one raw TCP socket, one request in flight at a time.
// It exists so the load generator spends as little CPU per request as possible: requests are
// prebuilt Buffers, and a response is framed by Content-Length (or chunked encoding) without a
// general-purpose parser. Reads use net's `onread` mode: the kernel fills one reused buffer per
// connection and no stream 'data' event is emitted, which cuts the client's CPU per request from
// about 14 to 10 µs here (64 connections of single-record appends) and leaves that CPU to the server.
// The connection itself is lib/serial-conn.ts, shared with the Redis peer's RESP client.
import type { Socket } from 'node:net';
import { connectSerial, SerialConn, type AnswerCallback } from './serial-conn.ts';

export interface Http1Response {
  status: number;
  /** The body, decoded from chunked framing when needed. */
  body: Buffer;
  /** Bytes of the whole response on the wire. */
  wireBytes: number;
}

export type ResponseCallback = AnswerCallback<Http1Response>;

const CRLFCRLF = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH_RE = /\r\ncontent-length:[ \t]*(\d+)/i;
const CHUNKED_RE = /\r\ntransfer-encoding:[ \t]*chunked/i;

/** Builds the bytes of one request. */
export function buildRequest(method: string, path: string, body?: string | Buffer, contentType = 'application/json'): Buffer {
  const b = body === undefined ? undefined : typeof body === 'string' ? Buffer.from(body) : body;
  const head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n`
    + (b ? `Content-Type: ${contentType}\r\nContent-Length: ${b.length}\r\n` : '')
    + '\r\n';
  return b ? Buffer.concat([Buffer.from(head, 'latin1'), b]) : Buffer.from(head, 'latin1');
}

/** Decodes a complete chunked body, or returns undefined while the terminating chunk is missing. */
function dechunk(buf: Buffer, from: number): { body: Buffer; end: number } | undefined {
  const parts: Buffer[] = [];
  let p = from;
  for (;;) {
    const eol = buf.indexOf('\r\n', p, 'latin1');
    if (eol < 0) return undefined;
    const size = parseInt(buf.toString('latin1', p, eol), 16);
    if (!Number.isFinite(size)) throw new Error('bad chunk size');
    const dataStart = eol + 2;
    if (size === 0) {
      if (buf.length < dataStart + 2) return undefined; // final CRLF (no trailers expected)
      return { body: parts.length === 1 ? parts[0] : Buffer.concat(parts), end: dataStart + 2 };
    }
    if (buf.length < dataStart + size + 2) return undefined;
    parts.push(buf.subarray(dataStart, dataStart + size));
    p = dataStart + size + 2;
  }
}

export class Http1Conn extends SerialConn<Http1Response> {
  private parts: Buffer[] = [];
  private partsBytes = 0;
  /** Header end and content length of the response being received, once known. */
  private headEnd = -1;
  private contentLength = -1;
  private chunked = false;

  private constructor(sock: Socket) {
    super(sock, 'Http1Conn');
  }

  static open(host: string, port: number): Promise<Http1Conn> {
    return connectSerial(host, port, (sock) => new Http1Conn(sock));
  }

  request(req: Buffer): Promise<Http1Response> {
    return new Promise((resolve, reject) => this.send(req, (err, res) => (err ? reject(err) : resolve(res!))));
  }

  protected onData(chunk: Buffer): void {
    // Chunks are kept in a list and joined once the response is whole: a 4 MB read page arrives in
    // dozens of chunks, and joining on every chunk would copy it quadratically.
    this.parts.push(chunk);
    this.partsBytes += chunk.length;
    if (this.headEnd < 0) {
      const buf = this.joinParts();
      const i = buf.indexOf(CRLFCRLF);
      if (i < 0) return;
      this.headEnd = i + 4;
      const head = buf.toString('latin1', 0, i);
      const m = CONTENT_LENGTH_RE.exec(head);
      this.chunked = !m && CHUNKED_RE.test(head);
      this.contentLength = m ? Number(m[1]) : 0;
    }
    if (!this.chunked && this.partsBytes < this.headEnd + this.contentLength) return;
    const buf = this.joinParts();
    let body: Buffer;
    let end: number;
    if (this.chunked) {
      let d: { body: Buffer; end: number } | undefined;
      try { d = dechunk(buf, this.headEnd); } catch (err) { this.sock.destroy(); this.fail(err as Error); return; }
      if (!d) return;
      body = d.body;
      end = d.end;
    } else {
      end = this.headEnd + this.contentLength;
      body = buf.subarray(this.headEnd, end);
    }
    const status = (buf[9] - 48) * 100 + (buf[10] - 48) * 10 + (buf[11] - 48);
    this.parts = buf.length > end ? [buf.subarray(end)] : []; // only on a protocol error: no pipelining
    this.partsBytes = buf.length - end;
    this.headEnd = -1;
    this.deliver({ status, body, wireBytes: end });
  }

  private joinParts(): Buffer {
    if (this.parts.length > 1) this.parts = [Buffer.concat(this.parts, this.partsBytes)];
    return this.parts[0];
  }
}
