// A request body on its way upstream, kept so it can be sent again: to the stream's leader after a
// 421, or to the next star after a refused connect. It streams up as it arrives (the star starts
// reading at once, with backpressure both ways), and a copy stays until an answer comes, bounded per
// request (GATEWAY_RESEND_BODY_BYTES_MAX) and across requests (a ResendBudget). A body whose copy
// could not be kept still goes up; it just cannot be resent.

import type { ClientRequest, IncomingMessage } from 'node:http';
import { GATEWAY_RESEND_BODY_BYTES_MAX } from '../config/limits.ts';

/** Bytes kept for resending across all requests of one Gateway. */
export class ResendBudget {
  private held = 0;
  constructor(private readonly bytesMax: number) {}
  take(bytes: number): boolean {
    if (this.held + bytes > this.bytesMax) return false;
    this.held += bytes;
    return true;
  }
  give(bytes: number): void {
    this.held -= bytes;
  }
}

export class RequestBody {
  private chunks: Buffer[] = [];
  private keptBytes = 0;
  /** Every byte that arrived is still in `chunks`. */
  private whole = true;
  private ended = false;
  private sink: ClientRequest | undefined;
  private paused = false;
  /** The body outgrew its write budget: nothing more goes anywhere. */
  refused = false;

  /** `meter` answers whether `bytes` more may go (write_Bps: only a body's first bytes can be refused); false refuses the body and calls onRefused. */
  constructor(private readonly req: IncomingMessage, private readonly budget: ResendBudget,
    meter: ((bytes: number) => boolean) | undefined, onRefused: () => void) {
    req.on('data', (chunk: Buffer) => {
      if (this.refused) return;
      if (meter && !meter(chunk.length)) {
        // Torn down before its end, so the star never sees a whole body and appends nothing.
        this.refused = true;
        this.sink?.destroy();
        this.drop();
        onRefused();
        return;
      }
      this.keep(chunk);
      const sink = this.sink;
      if (sink && !sink.write(chunk)) {
        this.req.pause();
        this.paused = true;
        sink.once('drain', () => { if (this.sink === sink) this.resume(); });
      }
    });
    req.on('end', () => {
      this.ended = true;
      if (!this.refused) this.sink?.end();
    });
  }

  /** Sends the body to `up`: what arrived so far, then the rest as it arrives. False when bytes that
   *  arrived are no longer kept, so the body cannot be sent whole (nothing is written then). */
  sendTo(up: ClientRequest): boolean {
    if (this.refused || !this.whole) return false;
    this.sink = up;
    for (const c of this.chunks) up.write(c);
    if (this.ended) up.end();
    // A pause waited for the previous star's drain, which will never come now.
    if (this.paused) this.resume();
    return true;
  }

  /** `up` failed or was answered 421: later bytes are kept for the next one, not written to it. */
  detach(up: ClientRequest): void {
    if (this.sink === up) this.sink = undefined;
  }

  /** Whether the whole body can still be sent again. */
  get resendable(): boolean {
    return !this.refused && this.whole;
  }

  /** An answer is on its way to the caller: nothing will be resent, so the copy goes. */
  release(): void {
    this.drop();
  }

  private keep(chunk: Buffer): void {
    if (!this.whole) return;
    if (this.keptBytes + chunk.length > GATEWAY_RESEND_BODY_BYTES_MAX || !this.budget.take(chunk.length)) {
      this.drop();
      return;
    }
    this.chunks.push(chunk);
    this.keptBytes += chunk.length;
  }

  private drop(): void {
    this.budget.give(this.keptBytes);
    this.chunks = [];
    this.keptBytes = 0;
    this.whole = false;
  }

  private resume(): void {
    this.paused = false;
    this.req.resume();
  }
}
