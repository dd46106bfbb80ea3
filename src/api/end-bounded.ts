// Ending a node:http response whose consumer may not be reading (native-free/'s event streams, the
// Gateway's relays). node:http has no write timeout, so an ended response to a consumer that stopped
// reading would hold its socket, and the bytes under it, for as long as the consumer stays. uWS drops
// such a connection after 10 s without progress; this gives node:http the same rule.

import type { ServerResponse } from 'node:http';
import { STREAM_END_FLUSH_MS_MAX } from '../config/limits.ts';

/** The socket's libuv handle: `writeQueueSize` is what a pending write has left for the kernel
 *  (node's own streams read it; a TLS socket's handle may not have it). */
interface WriteQueue { _handle?: { writeQueueSize?: number } | null }

/** How much of the ended answer the kernel has yet to take, two ways: node's buffer, which drops as
 *  each write completes (and a write may be several megabytes once buffered writes are gathered into
 *  one), and the pending write's remainder, which drops as the consumer reads. */
function unsent(res: ServerResponse): { buffered: number; queued: number } {
  const socket = res.socket as (ServerResponse['socket'] & WriteQueue) | null;
  return {
    buffered: res.writableLength + (socket?.writableLength ?? 0),
    queued: socket?._handle?.writeQueueSize ?? 0,
  };
}

/**
 * Ends `res` (after `last`, when given), then drops the connection once STREAM_END_FLUSH_MS_MAX
 * passes with none of the unsent bytes taken: a consumer still reading, however slowly, keeps it, as
 * on uWS. A response that finished emits `close` (node:http does after `finish` too, keep-alive or
 * not) and takes the bound back.
 */
export function endBounded(res: ServerResponse, last?: string | Uint8Array): void {
  if (last === undefined) res.end();
  else res.end(last);
  if (res.destroyed) return;
  let before = unsent(res);
  const bound = setInterval(() => {
    const now = unsent(res);
    // Nothing is added after end(), so any drop is the consumer's reading.
    const progressed = now.buffered < before.buffered || now.queued < before.queued;
    if (!progressed && now.buffered > 0) { res.destroy(); return; }
    before = now;
  }, STREAM_END_FLUSH_MS_MAX);
  bound.unref();
  res.once('close', () => clearInterval(bound));
}
