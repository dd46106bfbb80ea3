// ReadPlan round trips: a consumer follows the plan, fetches the settled segments' bytes itself,
// decodes them with the project's own reader (parseFooter + forEachRecord) and gets exactly the
// records Read returns.
//   presigned (default): a real svcd child; the URLs are served by the star's data bridge with Range;
//   raw: the real Star in-process; the consumer opens storage_bucket/object_key on the fs backend.
// Settled segments appear once a WAL file passes WAL_FILE_BYTES_MAX, so each stream gets a little
// more than that, in a few large batches.
import { strict as assert } from 'node:assert';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { Presigner } from '../../src/api/presign.ts';
import { WAL_FILE_BYTES_MAX } from '../../src/config/limits.ts';
import type { ReadPlanResponse__Output } from '../../src/gen/svc/v1/ReadPlanResponse.ts';
import type { DataServiceClient } from '../../src/gen/svc/v1/DataService.ts';
import { forEachRecord, type DecodedRecord } from '../../src/storage/format/record-codec.ts';
import { parseFooter } from '../../src/storage/segments/segment-format.ts';
import { bytes, call, failure } from '../grpc/client.ts';
import { startGrpcChild, type GrpcChild } from '../grpc/child.ts';
import { startHarness, type Harness } from '../grpc/harness.ts';

const RECORD_BYTES = 1000 * 1024;
const RECORDS_PER_BATCH = 8;
/** Past one WAL file, so the first file seals and settles. */
const RECORDS_TOTAL = Math.ceil(WAL_FILE_BYTES_MAX / RECORD_BYTES) + 4;
const POOL = randomBytes(RECORD_BYTES + 4096);
const SETTLE_WAIT_MS = 30_000;

/** Appends RECORDS_TOTAL records of ~1 MB (each a distinct slice, with one header) in large batches. */
async function fill(data: DataServiceClient, bucket: string, key: string, from = 0): Promise<void> {
  for (let seq = from; seq < from + RECORDS_TOTAL; seq += RECORDS_PER_BATCH) {
    const n = Math.min(RECORDS_PER_BATCH, from + RECORDS_TOTAL - seq);
    const records = Array.from({ length: n }, (_, i) => ({
      body: POOL.subarray((seq + i) % 4096, (seq + i) % 4096 + RECORD_BYTES - ((seq + i) % 7)),
      headers: [{ name: bytes('n'), value: bytes(String(seq + i)) }],
    }));
    await call(data.Append.bind(data), { bucket, key: bytes(key), records });
  }
}

/** Re-plans until the first WAL file has settled into a segment. */
async function settledPlan(data: DataServiceClient, bucket: string, key: string): Promise<ReadPlanResponse__Output> {
  const until = Date.now() + SETTLE_WAIT_MS;
  for (;;) {
    const plan = await call(data.ReadPlan.bind(data), { bucket, key: bytes(key), seq_num: 0 });
    if (plan.entries.length > 0) return plan;
    if (Date.now() > until) throw new Error('no segment settled in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Rec { seq: number; ts: number; body: string; headers: string }
const digest = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const fromDecoded = (r: DecodedRecord): Rec => ({
  seq: r.seq_num, ts: r.timestamp_ms, body: digest(r.body),
  headers: r.headers.map((h) => `${Buffer.from(h.name).toString()}=${Buffer.from(h.value).toString()}`).join(','),
});

/** Decodes a segment's frames given its footer bytes and a byte-range reader. */
async function decodeSegment(footer: Buffer, readRange: (offset: number, length: number) => Promise<Buffer>): Promise<Rec[]> {
  const out: Rec[] = [];
  for (const e of parseFooter(footer)) {
    const frame = await readRange(e.offset, e.frameBytes);
    assert.equal(frame.length, e.frameBytes);
    forEachRecord(frame, 0, 0, (r) => { out.push(fromDecoded(r)); return true; });
  }
  return out;
}

/** What Read returns for [from, to), paging. */
async function readRange(data: DataServiceClient, bucket: string, key: string, from: number, to: number): Promise<Rec[]> {
  const out: Rec[] = [];
  let seq = from;
  while (seq < to) {
    const page = await call(data.Read.bind(data), { bucket, key: bytes(key), seq_num: seq, limit: to - seq });
    assert.ok(page.records.length > 0);
    for (const r of page.records) {
      if (r.seq_num >= to) break;
      out.push({
        seq: r.seq_num, ts: r.timestamp_ms, body: digest(r.body),
        headers: r.headers.map((h) => `${h.name.toString()}=${h.value.toString()}`).join(','),
      });
    }
    seq = page.records[page.records.length - 1].seq_num + 1;
  }
  return out;
}

describe('ReadPlan, presigned URLs served by the star (svcd child)', () => {
  let c: GrpcChild;
  let plan: ReadPlanResponse__Output;
  let plannedAt: number;
  before(async () => {
    c = await startGrpcChild({ args: ['--readplan-ttl', '120000'] });
    await call(c.data.CreateBucket.bind(c.data), { bucket: 'hist', config: { create_stream_on_append: true } });
    await fill(c.data, 'hist', 'a/b');
    plannedAt = Date.now();
    plan = await settledPlan(c.data, 'hist', 'a/b');
  });
  after(async () => { await c.stop(); });

  it('vends tiling entries with a signed URL, footer window, sizes, seq and time bounds', async () => {
    assert.equal(plan.more, false);
    assert.ok(plan.expires_at_unix_ms >= plannedAt + 119_000 && plan.expires_at_unix_ms <= Date.now() + 121_000, 'expires after --readplan-ttl');
    assert.equal(plan.entries[0].first_seq_num, 0);
    for (let i = 1; i < plan.entries.length; i++) assert.equal(plan.entries[i].first_seq_num, plan.entries[i - 1].end_seq_num, 'entries tile');
    const last = plan.entries[plan.entries.length - 1];
    assert.equal(plan.vended_until, last.end_seq_num);
    assert.ok(last.end_seq_num <= RECORDS_TOTAL);
    for (const e of plan.entries) {
      assert.equal(e.location, 'presigned_url');
      assert.match(e.presigned_url ?? '', /^http:\/\/127\.0\.0\.1:\d+\/v1\/objects\/[^/?]+\?size=\d+&expires=\d+&sig=[A-Za-z0-9_-]+$/);
      assert.equal(e.payload_bytes, e.footer_offset);
      assert.ok(e.footer_length > 0);
      assert.ok(e.min_timestamp_ms > 0 && e.min_timestamp_ms <= e.max_timestamp_ms);
    }
    // A plan from the middle of a segment starts with that segment; from the settled ceiling, none.
    const mid = await call(c.data.ReadPlan.bind(c.data), { bucket: 'hist', key: bytes('a/b'), seq_num: 5 });
    assert.equal(mid.entries[0].first_seq_num, 0);
    const ceiling = await call(c.data.ReadPlan.bind(c.data), { bucket: 'hist', key: bytes('a/b'), seq_num: last.end_seq_num });
    assert.deepEqual([ceiling.entries.length, ceiling.vended_until], [0, last.end_seq_num]);
    const capped = await call(c.data.ReadPlan.bind(c.data), { bucket: 'hist', key: bytes('a/b'), seq_num: 0, end_seq_num: 3 });
    assert.equal(capped.entries.length, 1);
    assert.equal(capped.more, false);
    const byTime = await call(c.data.ReadPlan.bind(c.data), { bucket: 'hist', key: bytes('a/b'), timestamp_ms: plan.entries[0].min_timestamp_ms });
    assert.equal(byTime.entries[0].first_seq_num, 0);
  });

  it('a consumer fetches footer then frames by Range, decodes them, and gets exactly what Read returns', async () => {
    for (const e of plan.entries) {
      const url = e.presigned_url ?? '';
      const get = async (offset: number, length: number): Promise<Buffer> => {
        const res = await fetch(url, { headers: { Range: `bytes=${offset}-${offset + length - 1}` } });
        assert.equal(res.status, 206);
        assert.equal(res.headers.get('content-range'), `bytes ${offset}-${offset + length - 1}/${e.footer_offset + e.footer_length}`);
        return Buffer.from(await res.arrayBuffer());
      };
      const footer = await get(e.footer_offset, e.footer_length);
      const decoded = await decodeSegment(footer, get);
      const expected = await readRange(c.data, 'hist', 'a/b', e.first_seq_num, e.end_seq_num);
      assert.equal(decoded.length, e.end_seq_num - e.first_seq_num);
      assert.deepEqual(decoded, expected);
      assert.equal(decoded[0].headers, `n=${e.first_seq_num}`);
    }
  });

  it('serves the whole object without Range and a suffix range, and refuses a range past the end', async () => {
    const e = plan.entries[0];
    const size = e.footer_offset + e.footer_length;
    const whole = await fetch(e.presigned_url ?? '');
    assert.equal(whole.status, 200);
    assert.equal(Number(whole.headers.get('content-length')), size);
    await whole.arrayBuffer();
    const suffix = await fetch(e.presigned_url ?? '', { headers: { Range: `bytes=-${e.footer_length}` } });
    assert.equal(suffix.status, 206);
    assert.equal(parseFooter(Buffer.from(await suffix.arrayBuffer())).length > 0, true);
    const past = await fetch(e.presigned_url ?? '', { headers: { Range: `bytes=${size}-` } });
    assert.equal(past.status, 416);
    await past.arrayBuffer();
  });

  it('answers 403 for a bad or missing signature and for a URL naming another object or size', async () => {
    const u = new URL(plan.entries[0].presigned_url ?? '');
    const variants: URL[] = [];
    const sig = u.searchParams.get('sig') ?? '';
    // Another first character (a fixed 'A' would leave the 1 in 64 signatures that start with it intact).
    const badSig = new URL(u); badSig.searchParams.set('sig', `${sig.startsWith('A') ? 'B' : 'A'}${sig.slice(1)}`); variants.push(badSig);
    const noSig = new URL(u); noSig.searchParams.delete('sig'); variants.push(noSig);
    const longer = new URL(u); longer.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 1)); variants.push(longer);
    const bigger = new URL(u); bigger.searchParams.set('size', String(Number(u.searchParams.get('size')) + 1)); variants.push(bigger);
    const other = new URL(u); other.pathname = `${u.pathname}x`; variants.push(other);
    for (const v of variants) {
      const res = await fetch(v, { headers: { Range: 'bytes=0-9' } });
      assert.equal(res.status, 403, v.toString());
      assert.match(((await res.json()) as { error: string }).error, /presigned URL refused/);
    }
  });

  it('refuses raw vending on a presigned star (raw is for the trust domain)', async () => {
    const err = await failure(c.data.ReadPlan.bind(c.data), { bucket: 'hist', key: bytes('a/b'), seq_num: 0, mode: 'VENDING_MODE_RAW' });
    assert.equal(err.code, grpc.status.PERMISSION_DENIED);
  });
});

describe('presigned URL expiry', () => {
  it('verifies until the URL expires, then refuses with 403', () => {
    const p = new Presigner(randomBytes(32), 'http://127.0.0.1:1');
    const url = new URL(p.url({ objectKey: 'k/seg', sizeBytes: 10, expiresAtMs: 1_000 }));
    assert.equal(p.verify('k/seg', url.searchParams, 999).sizeBytes, 10);
    assert.throws(() => p.verify('k/seg', url.searchParams, 1_000), (e: Error & { code?: string }) => e.code === 'permission_denied' && /expired/.test(e.message));
    assert.throws(() => new Presigner(randomBytes(32), 'http://x').verify('k/seg', url.searchParams, 0), /bad signature/);
  });
});

describe('ReadPlan, raw vending (real Star in-process)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
    await call(h.data.CreateBucket.bind(h.data), { bucket: 'hist', config: { create_stream_on_append: true } });
    await fill(h.data, 'hist', 'raw');
    await fill(h.data, 'hist', 'raw', RECORDS_TOTAL); // a second WAL file: a second segment
  });
  after(async () => { await h.stop(); });

  it('names storage_bucket and object_key; the consumer reads them under its own identity', async () => {
    let plan = await settledPlan(h.data, 'hist', 'raw');
    const until = Date.now() + SETTLE_WAIT_MS;
    while (plan.entries.length < 2 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      plan = await call(h.data.ReadPlan.bind(h.data), { bucket: 'hist', key: bytes('raw'), seq_num: 0 });
    }
    assert.equal(plan.entries.length, 2);
    assert.equal(plan.entries[1].first_seq_num, plan.entries[0].end_seq_num, 'entries tile');
    // Cut at max_entries: `more`, and a re-plan from vended_until continues exactly there.
    const first = await call(h.data.ReadPlan.bind(h.data), { bucket: 'hist', key: bytes('raw'), seq_num: 0, max_entries: 1 });
    assert.deepEqual([first.entries.length, first.more, first.vended_until], [1, true, plan.entries[0].end_seq_num]);
    const rest = await call(h.data.ReadPlan.bind(h.data), { bucket: 'hist', key: bytes('raw'), seq_num: first.vended_until ?? 0, max_entries: 1 });
    assert.deepEqual([rest.entries[0].first_seq_num, rest.more, rest.vended_until], [first.vended_until, false, plan.entries[1].end_seq_num]);
    for (const e of plan.entries) {
      assert.equal(e.location, 'raw');
      assert.equal(e.raw?.storage_bucket, h.objectsDir);
      const object = readFileSync(join(e.raw?.storage_bucket ?? '', ...(e.raw?.object_key ?? '').split('/')));
      assert.equal(object.length, e.footer_offset + e.footer_length);
      const footer = object.subarray(e.footer_offset, e.footer_offset + e.footer_length);
      const decoded = await decodeSegment(footer, async (offset, length) => object.subarray(offset, offset + length));
      assert.deepEqual(decoded, await readRange(h.data, 'hist', 'raw', e.first_seq_num, e.end_seq_num));
    }
    // This star has no data bridge to serve presigned URLs: not a state a retry outlasts (FAILED_PRECONDITION
    // is convergible), but something this deployment does not do, as 501's UNIMPLEMENTED says.
    const err = await failure(h.data.ReadPlan.bind(h.data), { bucket: 'hist', key: bytes('raw'), seq_num: 0, mode: 'VENDING_MODE_PRESIGNED' });
    assert.equal(err.code, grpc.status.UNIMPLEMENTED);
    assert.match(err.details, /data bridge/);
  });
});
