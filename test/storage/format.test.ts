// The binary record format, crc32c and the segment footer: round trips and corruption detection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32c, crc32cImplementation, crc32cJs } from '../../src/storage/format/crc32c.ts';
import { rng } from '../helpers/rng.ts';
import {
  FRAME_FORMAT_VERSION, contentBytes, encodeBatch, encodeRotate, forEachRecord, frameInfo, frameIsIntact, frameTimestamps, sealFrame, type DecodedRecord,
} from '../../src/storage/format/record-codec.ts';
import { SEGMENT_FORMAT_VERSION, SegmentFooter, buildSegment, parseFooter } from '../../src/storage/segments/segment-format.ts';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';

test('crc32c matches the standard check value and is seedable', () => {
  assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
  assert.equal(crc32c(Buffer.alloc(32)), 0x8a9136aa);
  const a = Buffer.from('hello, '), b = Buffer.from('world');
  assert.equal(crc32c(b, 0, b.length, crc32c(a)), crc32c(Buffer.concat([a, b])));
});

test('crc32c (the CPU instruction when it loads) agrees with the JS code on random ranges, seeds and SharedArrayBuffer views', () => {
  const seed = 0x5eed;
  const next = rng(seed);
  const buf = new Uint8Array(new SharedArrayBuffer(70_000));
  for (let i = 0; i < buf.length; i++) buf[i] = Math.floor(next() * 256);
  for (let n = 0; n < 500; n++) {
    const start = Math.floor(next() * buf.length);
    const end = start + Math.floor(next() * Math.min(buf.length - start, n % 10 === 0 ? 70_000 : 300));
    const prior = Math.floor(next() * 2 ** 32);
    assert.equal(crc32c(buf, start, end, prior), crc32cJs(buf, start, end, prior), `seed ${seed}, case ${n}: [${start}, ${end}) after ${prior}`);
  }
  assert.equal(crc32cJs(Buffer.from('123456789')), 0xe3069283);
});

test('the native CRC-32C is what loaded (required under CI; elsewhere the JS code serves)', (t) => {
  if (crc32cImplementation !== 'native' && !process.env.CI) {
    t.skip('@node-rs/crc32 did not load here: the JS code serves, slower; under CI=true this fails');
    return;
  }
  assert.equal(crc32cImplementation, 'native');
});

test('a batch round-trips records, headers, timestamps and large sequence numbers', () => {
  const recs = [
    { timestamp_ms: 1, headers: [], body: Buffer.from('a') },
    { timestamp_ms: 2 ** 40, headers: [{ name: Buffer.from('k'), value: Buffer.from([0xff, 0]) }], body: Buffer.alloc(0) },
    { timestamp_ms: 3, headers: [], body: Buffer.alloc(70_000, 7) },
  ];
  const first = 2 ** 33 + 5;
  const f = encodeBatch(ID, first, recs);
  const info = frameInfo(f);
  assert.deepEqual([info.streamId, info.firstSeq, info.recordCount, info.frameBytes], [ID, first, 3, f.length]);
  assert.deepEqual(frameTimestamps(f), [1, 2 ** 40, 3]);
  const out: DecodedRecord[] = [];
  forEachRecord(f, 0, 1, (r) => { out.push(r); return true; });
  assert.equal(out.length, 2);
  assert.equal(out[0].seq_num, first + 1);
  assert.deepEqual(Buffer.from(out[0].headers[0].value), Buffer.from([0xff, 0]));
  assert.deepEqual(Buffer.from(out[1].body), Buffer.alloc(70_000, 7));
});

test('a sealed frame verifies; a flipped byte or a short read does not', () => {
  const f = encodeBatch(ID, 0, [{ timestamp_ms: 9, headers: [], body: Buffer.from('payload') }]);
  sealFrame(f, 0, f.length);
  assert.equal(frameIsIntact(f, 0, f.length), true);
  assert.equal(frameIsIntact(f, 0, f.length - 1), false);
  const g = Buffer.from(f);
  g[g.length - 2] ^= 1;
  assert.equal(frameIsIntact(g, 0, g.length), false);
});

test('a segment footer indexes every frame and rejects corruption', () => {
  const frames = [0, 3, 5].map((s, i) => encodeBatch(ID, s, Array.from({ length: [3, 2, 4][i] }, (_, j) => ({ timestamp_ms: 10 * s + j, headers: [], body: Buffer.from(`r${s + j}`) }))));
  const seg = buildSegment(frames);
  const entries = parseFooter(seg.bytes.subarray(seg.footerOffset));
  assert.deepEqual(entries.map((e) => [e.firstSeq, e.recordCount, e.minTs, e.maxTs]), [[0, 3, 0, 2], [3, 2, 30, 31], [5, 4, 50, 53]]);
  for (const e of entries) assert.equal(frameIsIntact(seg.bytes, e.offset, e.frameBytes), true);
  const bad = Buffer.from(seg.bytes.subarray(seg.footerOffset));
  bad[3] ^= 1;
  assert.throws(() => parseFooter(bad), /checksum/);
});

test('a built segment sums its records\' content and spans from their lengths alone, as decoding them does', () => {
  const next = rng(0x5e6);
  const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => Math.floor(next() * 256)));
  const frames: Uint8Array[] = [];
  let seq = 5;
  let ts = 1000;
  for (let i = 0; i < 50; i++) {
    const n = 1 + Math.floor(next() * 4);
    frames.push(encodeBatch(ID, seq, Array.from({ length: n }, () => ({
      timestamp_ms: (ts += Math.floor(next() * 3)),
      headers: Array.from({ length: Math.floor(next() * 3) }, () => ({ name: bytes(Math.floor(next() * 9)), value: bytes(Math.floor(next() * 30)) })),
      body: bytes(Math.floor(next() * 200)),
    }))));
    seq += n;
  }
  let content = 0;
  const stamps: number[] = [];
  for (const f of frames) forEachRecord(f, 0, 0, (r) => { content += contentBytes(r); stamps.push(r.timestamp_ms); return true; });
  const seg = buildSegment(frames);
  assert.deepEqual([seg.firstSeq, seg.endSeq, seg.minTs, seg.maxTs, seg.contentBytes], [5, seq, stamps[0], stamps[stamps.length - 1], content]);
  const entries = parseFooter(seg.bytes.subarray(seg.footerOffset));
  let at = 0;
  for (const [i, e] of entries.entries()) {
    const ts = frameTimestamps(frames[i]);
    assert.deepEqual([e.offset, e.frameBytes, e.firstSeq, e.recordCount, e.minTs, e.maxTs], [at, frames[i].length, frameInfo(frames[i]).firstSeq, ts.length, ts[0], ts[ts.length - 1]]);
    assert.equal(frameIsIntact(seg.bytes, e.offset, e.frameBytes), true);
    at += e.frameBytes;
  }
});

test('a footer finds the entry holding a seq_num or reaching a timestamp by search, as a scan of its entries would', () => {
  // Frames of 1 to 3 records; timestamps repeat across frames (a clamped client clock), as they may.
  const next = rng(0xf007);
  const frames: Uint8Array[] = [];
  let seq = 0;
  let ts = 100;
  for (let i = 0; i < 200; i++) {
    const n = 1 + Math.floor(next() * 3);
    frames.push(encodeBatch(ID, seq, Array.from({ length: n }, () => ({ timestamp_ms: (ts += Math.floor(next() * 2)), headers: [], body: Buffer.from('x') }))));
    seq += n;
  }
  const seg = buildSegment(frames);
  const footer = SegmentFooter.read(seg.bytes.subarray(seg.footerOffset));
  const entries = parseFooter(seg.bytes.subarray(seg.footerOffset));
  assert.equal(footer.length, entries.length);
  for (let s = -1; s <= seq + 1; s++) {
    const scan = entries.findIndex((e) => e.firstSeq + e.recordCount > s);
    assert.equal(footer.indexAfterSeq(s), scan < 0 ? entries.length : scan, `seq ${s}`);
  }
  for (let t = 99; t <= ts + 1; t++) {
    const scan = entries.findIndex((e) => e.maxTs >= t);
    assert.equal(footer.indexReachingTs(t), scan < 0 ? entries.length : scan, `timestamp ${t}`);
  }
});

test('frames and segments carry their format version; an older unversioned one reads, a newer one is refused', () => {
  const f = encodeBatch(ID, 0, [{ timestamp_ms: 1, headers: [], body: Buffer.from('a') }]);
  assert.equal(frameInfo(f).version, FRAME_FORMAT_VERSION);
  assert.equal(frameInfo(encodeRotate()).version, FRAME_FORMAT_VERSION);
  const seg = buildSegment([f]);
  const footer = Buffer.from(seg.bytes.subarray(seg.footerOffset));
  const versionAt = footer.length - 8; // trailer: entryCount, crc, version, magic
  assert.equal(footer.readUInt32LE(versionAt), SEGMENT_FORMAT_VERSION);
  footer.writeUInt32LE(0, versionAt); // as segments were written before they carried a version
  assert.equal(parseFooter(footer).length, 1);
  footer.writeUInt32LE(SEGMENT_FORMAT_VERSION + 1, versionAt);
  assert.throws(() => parseFooter(footer), /newer than this build/);
});
