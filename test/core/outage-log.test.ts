// A retrying loop's failures while a dependency is away are logged once an interval with a count, no
// stack; any other failure every time, whole (src/core/outage-log.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OutageLog } from '../../src/core/outage-log.ts';
import { MetadataUnavailableError } from '../../src/storage/metadata/metadata-store.ts';
import { ObjectStoreUnavailableError } from '../../src/storage/objects/object-store.ts';
import { OUTAGE_LOG_INTERVAL_MS } from '../../src/config/limits.ts';

test('outage failures: the first logged in one line, the rest of the interval counted, then one line with the count', () => {
  const lines: { msg: string; err?: unknown }[] = [];
  let now = 1_000_000;
  const log = new OutageLog((msg, err) => lines.push({ msg, err }), () => now);
  const s3 = new ObjectStoreUnavailableError('the object store is unavailable: connect ECONNREFUSED');
  log.error('load', 'loading b/s1 after taking its lease failed', s3);
  for (let i = 0; i < 50; i++) { now += 100; log.error('load', `loading b/s${i} after taking its lease failed`, s3); }
  assert.equal(lines.length, 1);
  assert.equal(lines[0].err, undefined, 'no stack: the error rides in the line');
  assert.match(lines[0].msg, /^loading b\/s1 after taking its lease failed: the object store is unavailable: connect ECONNREFUSED$/);
  // Another kind of work has its own interval; an outage wrapped in another error is one too.
  log.error('commit', 'group commit of 1 stream(s) failed', new Error('commit failed', { cause: new MetadataUnavailableError('gone') }));
  assert.equal(lines.length, 2);
  now += OUTAGE_LOG_INTERVAL_MS;
  log.error('load', 'loading b/s9 after taking its lease failed', s3);
  assert.equal(lines.length, 3);
  assert.match(lines[2].msg, /\(and 50 more like it in the last \d+ s\)$/);
});

test('any other failure is logged whole, every time', () => {
  const lines: { msg: string; err?: unknown }[] = [];
  const log = new OutageLog((msg, err) => lines.push({ msg, err }), () => 0);
  const bug = new TypeError('x is undefined');
  log.error('load', 'loading b/s after taking its lease failed', bug);
  log.error('load', 'loading b/s after taking its lease failed', bug);
  assert.deepEqual(lines, [{ msg: 'loading b/s after taking its lease failed', err: bug }, { msg: 'loading b/s after taking its lease failed', err: bug }]);
});
