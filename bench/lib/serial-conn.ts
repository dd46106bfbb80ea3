// One request or command in flight on a keep-alive TCP connection, read in net's `onread` mode (one
// reused buffer, no 'data' events), so every load generator here spends about the same CPU per
// request and a comparison is between servers, not clients. The protocol (lib/http1.ts, lib/resp.ts)
// parses what arrives in onData and hands each whole answer to deliver().
import { connect, type Socket } from 'node:net';

/** The reused read buffer of one connection; an answer is copied out of it as it arrives. */
const READ_BUFFER_BYTES = 64 * 1024;

export type AnswerCallback<T> = (err: Error | undefined, answer: T | undefined) => void;

/** Connects with `onread` into one reused buffer; rejects on a connection error (the caller bounds
 *  the wait with its own timer). */
export function connectSerial<C extends { received(chunk: Buffer): void }>(host: string, port: number, make: (sock: Socket) => C): Promise<C> {
  return new Promise((resolve, reject) => {
    let conn: C | undefined;
    const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
    const sock = connect({
      host, port,
      onread: {
        buffer,
        // The buffer is refilled by the next read, so the bytes are copied out now.
        callback: (n: number, buf: Uint8Array) => { conn?.received(Buffer.from(buf.subarray(0, n))); return true; },
      },
    });
    sock.once('connect', () => { sock.removeListener('error', reject); conn = make(sock); resolve(conn); });
    sock.once('error', reject);
  });
}

export abstract class SerialConn<T> {
  private cb: AnswerCallback<T> | undefined;
  private closedErr: Error | undefined;

  protected constructor(protected readonly sock: Socket, private readonly what: string) {
    sock.setNoDelay(true);
    sock.on('error', (err) => this.fail(err));
    sock.on('close', () => this.fail(new Error('connection closed')));
  }

  /** The connection closed or failed (a server's idle timeout closes one left unused). */
  get closed(): boolean { return this.closedErr !== undefined; }

  /** Sends one prebuilt request; cb runs once with its answer. */
  send(bytes: Buffer, cb: AnswerCallback<T>): void {
    if (this.closedErr) { cb(this.closedErr, undefined); return; }
    if (this.cb) throw new Error(`${this.what}: one at a time`);
    this.cb = cb;
    this.sock.write(bytes);
  }

  close(): void {
    this.sock.destroy();
  }

  /** Bytes arrived (called by connectSerial's reader). */
  received(chunk: Buffer): void { this.onData(chunk); }

  /** Parses what arrived; calls deliver() once an answer is whole, fail() on a protocol error. */
  protected abstract onData(chunk: Buffer): void;

  protected deliver(answer: T): void {
    const cb = this.cb;
    this.cb = undefined;
    cb?.(undefined, answer);
  }

  protected fail(err: Error): void {
    this.closedErr ??= err;
    const cb = this.cb;
    this.cb = undefined;
    cb?.(err, undefined);
  }
}
