// Keys are byte strings held as JS strings (storage/format/key-bytes.ts): the mapping must be one-to-one, leave
// UTF-8 keys exactly as they decode, and give every byte string back unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyFromBytes, keyIsText, keyToBytes } from '../../src/storage/format/key-bytes.ts';
import { OrderedKeys } from '../../src/core/ordered-keys.ts';
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

test('ordered keys: pages walk keys in byte order from any cursor, through adds and deletes that split blocks', () => {
  const r = rng(9);
  const byBytes = (a: string, b: string): number => Buffer.compare(keyToBytes(a), keyToBytes(b));
  const keys = [...new Set(Array.from({ length: 5000 }, () => keyFromBytes(randomBytes(r))))].filter((k) => k !== '');
  const half = keys.length >> 1;
  const set = new OrderedKeys(keys.slice(0, half)); // the boot's bulk load
  for (const k of keys.slice(half)) set.add(k); // creates after it, enough to split blocks
  for (let i = 0; i < keys.length; i += 3) set.delete(keys[i]);
  set.add(keys[1]); // a key already there changes nothing
  set.delete(keys[0]); // nor does one already gone
  const want = keys.filter((_, i) => i % 3 !== 0).sort(byBytes);
  assert.equal(set.size, want.length);
  const walked: string[] = [];
  for (let after = '', more = true; more;) {
    const page = set.page(after, 97);
    walked.push(...page.keys);
    more = page.more;
    if (more) after = page.keys[page.keys.length - 1];
  }
  assert.deepEqual(walked, want);
  // A cursor need not be a member: the page starts at the first key after its bytes.
  for (const cursor of keys.filter((_, i) => i % 3 === 0).slice(0, 50)) {
    const first = want.find((k) => byBytes(k, cursor) > 0);
    assert.equal(set.page(cursor, 1).keys[0], first);
  }
  assert.deepEqual(set.page(keyFromBytes(Buffer.alloc(20, 0xff)), 10), { keys: [], more: false });
});
