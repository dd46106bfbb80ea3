// The DS write lane against the real core (src/server.ts composition, in process): another writer
// appends between the moment a DS write decides on the stream's state and its guarded append. The
// append misses (match_seq_num), nothing of it lands, and the write is decided again on the state
// reloaded from the records: it lands after the other writer's record, once, and a producer retry
// of it is still a duplicate.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DsStates } from '../../src/api/ds/state.ts';
import { appendStream, createStream, type WriteCtx } from '../../src/api/ds/write.ts';
import type { StreamService } from '../../src/core/service-api.ts';
import type { AppendInput } from '../../src/core/types.ts';
import { startRealStar, type RealStar } from '../grpc/real-star.ts';

const BUCKET = 'ds';
let real: RealStar;
before(async () => { real = await startRealStar(); });
after(async () => { await real?.stop(); });

test('a guarded DS append that another writer got ahead of is decided again and lands once, after it', async () => {
  const star = real.star as unknown as StreamService;
  /** Guarded appends to interfere with: before each, another writer appends one record. */
  let interfere = 0;
  let missed = 0;
  const svc = new Proxy(star, {
    get(target, prop, receiver) {
      if (prop !== 'append') return Reflect.get(target, prop, receiver) as unknown;
      return async (bucket: string, key: string, input: AppendInput) => {
        if (input.match_seq_num !== undefined && interfere > 0) {
          interfere -= 1;
          await target.append(bucket, key, { records: [{ headers: [], body: Buffer.from('outside') }] });
          try {
            return await target.append(bucket, key, input);
          } catch (err) {
            missed += 1;
            throw err;
          }
        }
        return target.append(bucket, key, input);
      };
    },
  });
  const states = new DsStates(svc, BUCKET, () => Date.now());
  const ctx = (body: string, headers: Record<string, string>): WriteCtx => ({
    svc, states, key: 'k', nowMs: Date.now(), body: Buffer.from(body), url: 'http://x/ds/v1/stream/k',
    header: (n) => ({ 'content-type': 'text/plain', ...headers })[n],
  });
  assert.equal((await createStream(ctx('a', {}))).status, 201);
  const producer = { 'producer-id': 'p', 'producer-epoch': '0', 'producer-seq': '0' };
  interfere = 1;
  assert.equal((await appendStream(ctx('b', producer))).status, 200, 'decided again after the miss, and landed');
  assert.equal(missed, 1, 'the first guarded append missed');
  assert.equal((await appendStream(ctx('b', producer))).status, 204, 'a retry of it is a duplicate');
  const page = await star.read(BUCKET, 'k', { start: { kind: 'seq_num', value: 0 }, limit: 100, maxBytes: 0, clamp: true });
  assert.deepEqual(page.records.map((r) => Buffer.from(r.body).toString()).slice(1), ['a', 'outside', 'b']);
});
