// The HTTP/2 transport under grpc-js, set where grpc-js has no option for it: the keepalive that
// drops a peer that stopped answering (with the closing sessions it must spare), and the header
// list size the listener advertises. Two of these reach grpc-js's private fields (noted at each);
// the tests that read their effect off real connections fail if an upgrade moves them.
import type { EventEmitter } from 'node:events';
import type { ServerHttp2Session, ServerOptions as Http2ServerOptions } from 'node:http2';
import type * as grpc from '@grpc/grpc-js';
import { GRPC_HEADER_LIST_BYTES_MAX, GRPC_KEEPALIVE_TIMEOUT_MS, GRPC_KEEPALIVE_TIMEOUT_MS_MIN } from '../../config/limits.ts';

/** grpc-js's keepalive options for a ping every `keepaliveMs`: it destroys a connection whose PING
 *  goes unanswered, or cannot be sent, past the timeout (limits.ts: GRPC_KEEPALIVE_TIMEOUT_MS). */
export function keepaliveOptions(keepaliveMs: number): grpc.ServerOptions {
  return {
    'grpc.keepalive_time_ms': keepaliveMs,
    'grpc.keepalive_timeout_ms': Math.max(GRPC_KEEPALIVE_TIMEOUT_MS_MIN, Math.min(GRPC_KEEPALIVE_TIMEOUT_MS, 2 * keepaliveMs)),
  };
}

/** Puts SETTINGS_MAX_HEADER_LIST_SIZE (GRPC_HEADER_LIST_BYTES_MAX) into the HTTP/2 settings grpc-js
 *  creates its listeners with: grpc-js has no option for it, so this sets its private
 *  `commonServerOptions` before bindAsync reads them (test/grpc/head-limits.test.ts reads the
 *  setting off a connection, so an upgrade that moves the field fails there). */
export function advertiseHeaderListLimit(server: grpc.Server): void {
  const options = (server as unknown as { commonServerOptions?: Http2ServerOptions }).commonServerOptions;
  if (options === undefined) return;
  options.settings = { ...options.settings, maxHeaderListSize: GRPC_HEADER_LIST_BYTES_MAX };
}

/**
 * grpc-js's keepalive pings every session, and takes a ping that cannot be sent for a dead peer:
 * it destroys the session. Node's ping() on a session that is closing gracefully (its client sent
 * GOAWAY, as grpc-js's channel.close() does; or the star's own drain) sends nothing and returns
 * undefined, so every call still finishing on such a connection was cut with UNAVAILABLE at the next
 * ping. Each session's ping is wrapped: while it closes, it answers at once as if the peer had, and
 * the calls on it finish as they did before the keepalive. Reaches grpc-js's private `http2Servers`
 * (its listeners, made in bindAsync); test/grpc/keepalive.test.ts fails if an upgrade moves it.
 */
export function spareClosingSessions(server: grpc.Server): void {
  const listeners = (server as unknown as { http2Servers?: Map<EventEmitter, unknown> }).http2Servers;
  for (const listener of listeners?.keys() ?? []) {
    listener.on('session', (session: ServerHttp2Session) => {
      const ping = session.ping.bind(session) as (cb: PingCallback) => boolean;
      const spared = (cb: PingCallback): boolean => {
        if (!session.closed || session.destroyed) return ping(cb);
        queueMicrotask(() => cb(null, 0, SPARED_PING_PAYLOAD));
        return true;
      };
      session.ping = spared as ServerHttp2Session['ping'];
    });
  }
}
type PingCallback = (err: Error | null, duration: number, payload: Buffer) => void;
const SPARED_PING_PAYLOAD = Buffer.alloc(8);
