// svc:// addresses: printing and parsing round-trip for random keys (any bytes, UTF-8 or not), the
// percent-encoding of the spec's scope grammar, the lenient parse of raw slashes, and the refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AddressError, encodeKey, formatAddress, keyBytes, parseAddress, parseStreamAddress, type StreamKey } from '../../src/client/index.ts';
import { Rng } from '../crash/crash-kit.ts';

const SEED = Number(process.env.SVCD_ADDRESS_SEED ?? 0x5eed) >>> 0;
const ROUNDS = 5000;

function randomKey(rng: Rng): StreamKey {
  const n = rng.int(1, 40);
  switch (rng.int(0, 2)) {
    case 0: { // arbitrary bytes, often not UTF-8
      const b = new Uint8Array(n);
      for (let i = 0; i < n; i++) b[i] = rng.int(0, 255);
      return b;
    }
    case 1: return rng.text(n); // text with multi-byte characters, slashes, spaces, quotes
    default: { // the characters that need care in a URL
      const alphabet = ['/', '%', '?', '#', ' ', '*', ':', '@', '+', '~', '.', '-', '_', 'a', 'Z', '0', 'é', '😀', '%2F'];
      let s = '';
      for (let i = 0; i < n; i++) s += alphabet[rng.int(0, alphabet.length - 1)];
      return s;
    }
  }
}

function randomBucket(rng: Rng): string {
  const first = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const rest = `${first}._-`;
  let s = first[rng.int(0, first.length - 1)];
  for (let i = rng.int(0, 20); i > 0; i--) s += rest[rng.int(0, rest.length - 1)];
  return s;
}

test('parse(format(a)) gives back the same bucket and key bytes, and format(parse(s)) is canonical', () => {
  const rng = new Rng(SEED);
  for (let i = 0; i < ROUNDS; i++) {
    const a = { bucket: randomBucket(rng), key: randomKey(rng) };
    const printed = formatAddress(a);
    assert.match(printed, /^svc:\/\/[A-Za-z0-9._-]+\/[A-Za-z0-9._~%-]+$/, `seed ${SEED} round ${i}: printed form is plain ASCII`);
    const back = parseStreamAddress(printed);
    assert.equal(back.bucket, a.bucket);
    assert.deepEqual(keyBytes(back.key), keyBytes(a.key), `seed ${SEED} round ${i}: ${printed}`);
    // Text keys come back as text, byte keys that are not UTF-8 as bytes.
    if (typeof a.key === 'string' && a.key.isWellFormed()) assert.equal(back.key, a.key);
    assert.equal(formatAddress(back), printed);
  }
});

test('the spec examples: a slash in a key is %2F, and every byte outside A-Z a-z 0-9 - . _ ~ is %HH uppercase', () => {
  assert.equal(formatAddress({ bucket: 'orders', key: 'orders/eu' }), 'svc://orders/orders%2Feu');
  assert.equal(encodeKey('a*b c~d'), 'a%2Ab%20c~d');
  assert.equal(encodeKey(new Uint8Array([0xff, 0x00, 0x41])), '%FF%00A');
  assert.equal(encodeKey('é'), '%C3%A9');
  assert.equal(formatAddress({ bucket: 'b' }), 'svc://b');
});

test('parsing: a raw slash belongs to the key, escapes decode to bytes, lowercase hex and scheme are accepted', () => {
  assert.deepEqual(parseAddress('svc://b/orders/eu'), { bucket: 'b', key: 'orders/eu' });
  assert.deepEqual(parseAddress('svc://b/orders%2feu'), { bucket: 'b', key: 'orders/eu' });
  assert.deepEqual(parseAddress('SVC://b/k'), { bucket: 'b', key: 'k' });
  assert.deepEqual(parseAddress('svc://b/café'), { bucket: 'b', key: 'café' });
  assert.deepEqual(parseAddress('svc://b'), { bucket: 'b' });
  const bytes = parseAddress('svc://b/%FF%FE').key;
  assert.ok(bytes instanceof Uint8Array);
  assert.deepEqual([...bytes], [0xff, 0xfe]);
});

test('bad addresses are refused with the reason', () => {
  const bad: [string, RegExp][] = [
    ['http://b/k', /starts with svc:\/\//],
    ['svc://', /bucket name is empty/],
    ['svc:///k', /bucket name is empty/],
    ['svc://-b/k', /bucket name/],
    ['svc://b$/k', /bucket name/],
    [`svc://${'a'.repeat(129)}`, /longer than 128/],
    ['svc://b/', /key is empty/],
    ['svc://b/%G0', /%HH/],
    ['svc://b/50%', /%HH/],
    [`svc://b/${'k'.repeat(1025)}`, /longer than 1024 bytes/],
  ];
  for (const [input, reason] of bad) {
    assert.throws(() => parseAddress(input), (err: unknown) => err instanceof AddressError && reason.test(err.message), input);
  }
  assert.throws(() => parseStreamAddress('svc://b'), /svc:\/\/bucket\/key/);
});
