// An S3 that accepts a request and never answers (stopped with SIGSTOP, wedged, a black-holed route)
// must cost a call its request bound, not forever: a cluster star's acks wait on its PUTs. The SDK's
// own request timeout only logs a warning unless told to throw (chaos audit F7). A real TCP server
// that accepts and stays silent stands in for the S3; the store is the real one, its bound shortened.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { S3ObjectStore } from '../../src/storage/objects/s3-store.ts';
import { S3_ATTEMPTS_MAX } from '../../src/config/limits.ts';
import { within } from '../helpers/server.ts';
import { TrackedObjectStore } from '../../src/storage/objects/tracked-store.ts';
import { ObjectStoreUnavailableError } from '../../src/storage/objects/object-store.ts';
import { DependencyHealth } from '../../src/storage/dependency-health.ts';

/** The store's bound for one request here (the star's is S3_REQUEST_MS_MAX). */
const REQUEST_MS = 300;
/** Every attempt's bound, with room for the SDK's backoff between attempts and a loaded machine: a
 *  call still pending past it hangs (a bound on a hang, not a speed). */
const CALL_WAIT_MS_MAX = S3_ATTEMPTS_MAX * REQUEST_MS + 15_000;

/** A TCP server that accepts and never answers, and an S3 store pointed at it (each request bounded
 *  by `requestMsMax`). */
async function silentS3(requestMsMax: number): Promise<{ store: S3ObjectStore; held: Socket[]; close(): void }> {
  // The SDK signs with whatever credentials it finds; without any it would fail before sending.
  process.env.AWS_ACCESS_KEY_ID ??= 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'S3RVER';
  const held: Socket[] = [];
  const silent = createServer((s) => { held.push(s); s.on('error', () => undefined); });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  const port = (silent.address() as { port: number }).port;
  const store = new S3ObjectStore({
    backend: 's3', bucket: 'b', prefix: '', region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true, requestMsMax,
  });
  return { store, held, close: () => { for (const s of held) s.destroy(); silent.close(); } };
}

test('a call to an S3 that accepted it and went silent fails after its attempts, never hangs', async () => {
  const { store, held, close } = await silentS3(REQUEST_MS);
  try {
    let outcome: unknown = 'pending';
    const put = store.put('k', new Uint8Array([1, 2, 3])).then(() => 'stored', (err: unknown) => err);
    void put.then((o) => { outcome = o; });
    assert.ok(await within(put, CALL_WAIT_MS_MAX), `the put was still pending after ${CALL_WAIT_MS_MAX} ms`);
    assert.ok(outcome instanceof Error, `the put failed: ${String(outcome)}`);
    assert.ok(held.length >= 1, 'the request reached the silent server');
  } finally {
    close();
  }
});

test('a read the main thread makes of a silent S3 is given up at its own bound (not the requests\' minute each) and is the store being unavailable', async () => {
  const { store, held, close } = await silentS3(60_000);
  try {
    const health = new DependencyHealth('objects', undefined);
    const tracked = new TrackedObjectStore(store, health, REQUEST_MS);
    const get = tracked.get('k', { offset: 0, length: 10 }).then(() => 'read', (err: unknown) => err);
    assert.ok(await within(get, CALL_WAIT_MS_MAX), `the read was still pending after ${CALL_WAIT_MS_MAX} ms`);
    const outcome = await get;
    assert.ok(outcome instanceof ObjectStoreUnavailableError, `the read failed as the store being unavailable: ${String(outcome)}`);
    assert.equal(health.up, false);
    assert.ok(held.length >= 1, 'the request reached the silent server');
  } finally {
    close();
  }
});
