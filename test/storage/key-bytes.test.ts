// Keys are byte strings held as JS strings (storage/format/key-bytes.ts): the mapping must be one-to-one, leave
// UTF-8 keys exactly as they decode, and give every byte string back unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyFromBytes, keyIsText, keyToBytes, keyUpperBound, sortKeysByBytes } from '../../src/storage/format/key-bytes.ts';
import { rng } from '../helpers/rng.ts';

/** Random bytes biased toward UTF-8 edge cases: lead and continuation bytes, surrogate and overlong ranges. */
function randomBytes(r: () => number): Buffer {
  const picks = [0x00, 0x41, 0x7f, 0x80, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0xa0, 0x9f, 0x8f, 0x90];
  const n = Math.floor(r() * 12);
  return Buffer.from(Array.from({ length: n }, () => (r() < 0.6 ? picks[Math.floor(r() * picks.length)] : Math.floor(r() * 256))));
}

test('every byte string comes back unchanged, and valid UTF-8 decodes as text', () => {
  const r = rng(7);
  const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  for (let n = 0; n < 20000; n++) {
    const b = randomBytes(r);
    const k = keyFromBytes(b);
    assert.deepEqual(keyToBytes(k), b, `seed 7 case ${n}: ${b.toString('hex')}`);
    let text: string | undefined;
    try { text = strict.decode(b); } catch { text = undefined; }
    assert.equal(keyIsText(k), text !== undefined, `seed 7 case ${n}: ${b.toString('hex')}`);
    if (text !== undefined) assert.equal(k, text);
  }
});

test('different bytes never share a key', () => {
  const r = rng(8);
  const seen = new Map<string, string>();
  for (let n = 0; n < 20000; n++) {
    const b = randomBytes(r);
    const k = keyFromBytes(b);
    const prev = seen.get(k);
    if (prev !== undefined) assert.equal(prev, b.toString('hex'), `two byte strings map to one key: ${prev} and ${b.toString('hex')}`);
    seen.set(k, b.toString('hex'));
  }
});

test('text keys with astral characters and U+DC80-range pairs stay text', () => {
  for (const s of ['orders/eu', 'caf\u00e9', '\u{1F600}', '\u{10FC80}', '\u{10FCFF}x', '']) {
    assert.ok(keyIsText(s), s);
    assert.equal(keyFromBytes(keyToBytes(s)), s);
    assert.deepEqual(keyToBytes(s), Buffer.from(s, 'utf8'));
  }
  assert.equal(keyIsText(keyFromBytes(Buffer.from([0x61, 0xff]))), false);
});

test('keys sort by their bytes, and the upper bound finds the first key after a cursor', () => {
  const r = rng(9);
  const keys = [...new Set(Array.from({ length: 400 }, () => keyFromBytes(randomBytes(r))))].filter((k) => k !== '');
  const sorted = sortKeysByBytes([...keys].reverse());
  for (let i = 1; i < sorted.length; i++) {
    assert.ok(Buffer.compare(keyToBytes(sorted[i - 1]), keyToBytes(sorted[i])) < 0, `${i}`);
  }
  for (let i = 0; i < sorted.length; i++) assert.equal(keyUpperBound(sorted, sorted[i]), i + 1);
  assert.equal(keyUpperBound(sorted, keyFromBytes(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]))), sorted.length);
});
