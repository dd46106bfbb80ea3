// Bare node:http2 for the gRPC tests that must see what a star puts on the wire (a status in the
// trailers, a stream's reset code, a refused stream), not what a gRPC library makes of it; and the
// bounded wait those tests fail with instead of hanging.
import type * as http2 from 'node:http2';
import { loadSvcProto } from '../../src/api/grpc/proto.ts';
import { within } from '../helpers/server.ts';
import { bytes } from './client.ts';

/** `p`, or a failure naming `what` once `maxMs` passes (a bound, not a speed). */
export async function bounded<T>(p: Promise<T>, what: string, maxMs: number): Promise<T> {
  if (!(await within(p, maxMs))) throw new Error(`${what}: nothing within ${maxMs} ms`);
  return p;
}

/** gRPC's length-prefixed message framing (uncompressed). */
export function grpcFrame(message: Uint8Array): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

/** What a bare call came to: its grpc-status, or the stream's error (a reset, a refusal). */
export interface RawOutcome { status?: number; error?: string }

/** A CheckTail of stream b/k on `session` with `extra` headers, whole, within `maxMs`. */
export function rawCheckTail(session: http2.ClientHttp2Session, extra: http2.OutgoingHttpHeaders, maxMs: number): Promise<RawOutcome> {
  const { proto } = loadSvcProto();
  const message = proto.svc.v1.DataService.service.CheckTail.requestSerialize({ bucket: 'b', key: bytes('k') });
  return bounded(new Promise<RawOutcome>((resolve) => {
    const req = session.request({ ':method': 'POST', ':path': '/svc.v1.DataService/CheckTail', 'content-type': 'application/grpc', te: 'trailers', ...extra });
    let status: number | undefined;
    let error: string | undefined;
    const take = (h: http2.IncomingHttpHeaders): void => { if (h['grpc-status'] !== undefined) status = Number(h['grpc-status']); };
    req.on('response', take);
    req.on('trailers', take);
    req.on('data', () => undefined);
    req.on('error', (e: NodeJS.ErrnoException) => { error = `${e.code ?? ''} ${e.message}`; });
    req.on('close', () => resolve({ ...(status !== undefined ? { status } : {}), ...(error !== undefined ? { error } : {}) }));
    req.end(grpcFrame(message));
  }), 'a CheckTail', maxMs);
}
