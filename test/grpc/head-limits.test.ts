// The gRPC listener advertises the header list it takes (SETTINGS_MAX_HEADER_LIST_SIZE,
// GRPC_HEADER_LIST_BYTES_MAX), so a client refuses an over-large metadata call itself instead of
// sending it: one field past nghttp2's HPACK ceiling wedged the connection (found with grpc-go,
// which checks the advertised size before it sends, as C-core and Node do).
//   - the setting is on every connection the listener accepts;
//   - metadata under it is served, on the same connection as before;
//   - a call over it sent anyway is refused on its own stream, and the connection serves on (grpc-go,
//     checked by hand, refuses such a call itself: "header list size to send violates the maximum
//     size (65536 bytes) set by server").
import { strict as assert } from 'node:assert';
import * as http2 from 'node:http2';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { GRPC_HEADER_LIST_BYTES_MAX } from '../../src/config/limits.ts';
import { startGrpcChild, type GrpcChild } from './child.ts';
import { rawCheckTail, type RawOutcome } from './raw-h2.ts';

/** A call's answer may take this long before the test gives up on it (a bound, not a speed). */
const CALL_WAIT_MS_MAX = 15_000;
/** The client's own limit on a header block it sends, far past the star's. */
const OWN_SEND_LIMIT_BYTES = 1024 * 1024;
/** Metadata over the advertised size whose HPACK form ('a' is a 5-bit Huffman code) stays under
 *  nghttp2's 64 KiB field ceiling: a star that did not advertise its limit would serve it. */
const OVER_LIMIT_VALUE = 'a'.repeat(GRPC_HEADER_LIST_BYTES_MAX + 4096);

describe('the gRPC listener advertises the header list size it takes', () => {
  let star: GrpcChild;
  let session: http2.ClientHttp2Session;
  before(async () => {
    star = await startGrpcChild();
    // Node's client stops a header block of 64 KiB on its own (maxSendHeaderBlockLength): lifted, so
    // what stops one here is the size the star advertises.
    session = http2.connect(`http://127.0.0.1:${star.grpcPort}`, { maxSendHeaderBlockLength: OWN_SEND_LIMIT_BYTES });
    session.on('error', () => undefined);
    await new Promise<void>((resolve) => session.once('remoteSettings', () => resolve()));
  });
  after(async () => {
    session?.close();
    await star?.stop();
  });

  const checkTail = (extra: http2.OutgoingHttpHeaders): Promise<RawOutcome> => rawCheckTail(session, extra, CALL_WAIT_MS_MAX);

  it(`SETTINGS_MAX_HEADER_LIST_SIZE is ${GRPC_HEADER_LIST_BYTES_MAX}; metadata under it is served on the connection`, async () => {
    assert.equal(session.remoteSettings.maxHeaderListSize, GRPC_HEADER_LIST_BYTES_MAX);
    // Two 24 KiB values: 48 KiB of metadata, well under the limit with the call's own headers.
    const value = 'v'.repeat(24 * 1024);
    const answer = await checkTail({ 'x-a': value, 'x-b': value });
    assert.deepEqual(answer, { status: grpc.status.NOT_FOUND }, 'the call was served (the bucket does not exist)');
  });

  it('a call over it sent anyway (a client that does not check the setting) is refused on its own stream; the connection serves on', async () => {
    const answer = await checkTail({ 'x-big': OVER_LIMIT_VALUE });
    assert.equal(answer.status, undefined, 'the star answered a call it advertised it would not take');
    assert.match(answer.error ?? '', /ENHANCE_YOUR_CALM/);
    // The same connection: the next call is answered.
    assert.deepEqual(await checkTail({ 'x-small': 'v' }), { status: grpc.status.NOT_FOUND });
    assert.equal(session.closed || session.destroyed, false);
  });
});
