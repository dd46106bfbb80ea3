// What every command gets: its parsed flags, the clients built from --url/--token/--grpc (or SVC_*),
// and the output streams, written with backpressure (a slow pipe slows the command, it does not
// buffer without bound) and quiet on a closed pipe (`svc read … | head`).

import { once } from 'node:events';
import { SvcClient } from '../../client/index.ts';
import type { GrpcClient } from '../../client/grpc/index.ts';
import { Args, UsageError } from './args.ts';

export const DEFAULT_URL = 'http://127.0.0.1:7070';

/** Output is gathered into chunks of about this size before a write. */
export const OUT_CHUNK_BYTES = 64 * 1024;

/** stdout went away (EPIPE): the command stops quietly with success, as `head` expects. */
export class OutputClosed extends Error {}

export class Output {
  private closed = false;
  private pending: (string | Uint8Array)[] = [];
  private pendingBytes = 0;

  constructor(readonly stream: NodeJS.WritableStream & { isTTY?: boolean }) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') this.closed = true;
      else throw err;
    });
  }

  get isTTY(): boolean {
    return this.stream.isTTY === true;
  }

  /** Queues bytes or text; writes once a chunk's worth is gathered. */
  async write(data: string | Uint8Array): Promise<void> {
    if (this.closed) throw new OutputClosed();
    this.pending.push(data);
    this.pendingBytes += data.length;
    if (this.pendingBytes >= OUT_CHUNK_BYTES) await this.flush();
  }

  async line(text: string): Promise<void> {
    await this.write(`${text}\n`);
  }

  /** Writes what is queued and waits for the stream to drain. */
  async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const parts = this.pending.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p));
    this.pending = [];
    this.pendingBytes = 0;
    if (this.closed) throw new OutputClosed();
    if (!this.stream.write(Buffer.concat(parts))) {
      try {
        await Promise.race([once(this.stream, 'drain'), once(this.stream, 'error')]);
      } catch (err) {
        // once() rejects with the 'error' event's error: a reader that went away (`| head`) is EPIPE.
        if ((err as NodeJS.ErrnoException).code === 'EPIPE') throw new OutputClosed();
        throw err;
      }
    }
    if (this.closed) throw new OutputClosed();
  }
}

export class Context {
  readonly out = new Output(process.stdout);
  private http: SvcClient | undefined;
  private grpc: GrpcClient | undefined;

  constructor(readonly args: Args, readonly env: NodeJS.ProcessEnv) {}

  get json(): boolean {
    return this.args.bool('json');
  }

  /** The HTTP client (data bridge or Gateway). */
  client(): SvcClient {
    const url = this.args.str('url') ?? DEFAULT_URL;
    // A bad --url (or SVC_URL) is a usage error: nothing is sent.
    if (!/^https?:\/\/[^/]/i.test(url)) throw new UsageError(`--url (or SVC_URL) must be http:// or https://, got ${JSON.stringify(url)}`);
    this.http ??= new SvcClient({
      url,
      ...(this.args.str('token') !== undefined ? { token: this.args.str('token')! } : {}),
    });
    return this.http;
  }

  /** The gRPC client; needs --grpc or SVC_GRPC. Loaded on first use: most commands never pay for
   *  @grpc/grpc-js and the schema. */
  async grpcClient(): Promise<GrpcClient> {
    const address = this.args.str('grpc');
    if (address === undefined) throw new UsageError('this command talks to the gRPC listener: give --grpc HOST:PORT (or SVC_GRPC)');
    const { GrpcClient } = await import('../../client/grpc/index.ts');
    this.grpc ??= new GrpcClient({ address, ...(this.args.str('token') !== undefined ? { token: this.args.str('token')! } : {}) });
    return this.grpc;
  }

  close(): void {
    this.grpc?.close();
  }

  /** One line on stderr (progress, notes): never part of the command's output. */
  note(text: string): void {
    process.stderr.write(`${text}\n`);
  }
}
