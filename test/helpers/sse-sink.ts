// An in-memory SSE sink for tests that drive the SSE pump without a socket: it records what is
// written, is never backpressured, and closes when the test says.
import type { SseSink } from '../../src/api/exchange.ts';

export function recordingSink(): { sink: SseSink; writes: string[]; close(): void } {
  const writes: string[] = [];
  let onClose: (() => void) | undefined;
  const sink: SseSink = {
    closed: false,
    write(c) { writes.push(String(c)); return true; },
    cork(fn) { fn(); },
    onWritable() { /* never backpressured here */ },
    onClose(cb) { onClose = cb; },
    end() { /* nothing to end */ },
    destroy() { /* nothing to drop */ },
  };
  return { sink, writes, close: () => onClose?.() };
}
