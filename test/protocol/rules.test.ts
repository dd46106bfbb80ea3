// The protocol leaf does without Node's Buffer (it is built for browsers too), so what it counts and
// encodes by hand must agree with what the server did through Buffer: UTF-8 lengths, listing cursors
// (base64url, with Node's leniency on a final lone character), key bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { keyFromBytes, keyToBytes } from '../../src/protocol/key-bytes.ts';
import { checkTextBytes, decodeStreamCursor, encodeStreamCursor, isBucketName } from '../../src/protocol/rules.ts';
import { utf8ByteLength } from '../../src/protocol/utf8.ts';

/** Any UTF-16 units, lone surrogates included. */
const units = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 300 }).map((a) => String.fromCharCode(...a));
const text = fc.oneof(units, fc.string({ unit: 'grapheme', maxLength: 100 }), fc.string({ maxLength: 300 }));

test('utf8ByteLength is Buffer.byteLength', () => {
  fc.assert(fc.property(text, (s) => { assert.equal(utf8ByteLength(s), Buffer.byteLength(s)); }), { numRuns: 5000 });
});

test('checkTextBytes refuses exactly what is over the bound in UTF-8', () => {
  for (const max of [5, 256]) {
    fc.assert(fc.property(text, (s) => {
      const over = Buffer.byteLength(s) > max;
      if (over) assert.throws(() => checkTextBytes(s, 'f', max), { code: 'invalid_argument', message: `f is longer than ${max} bytes` });
      else assert.equal(checkTextBytes(s, 'f', max), s);
    }), { numRuns: 3000 });
  }
});

test('stream cursors are the base64url of the key bytes, and decode back to the key', () => {
  fc.assert(fc.property(fc.uint8Array({ minLength: 1, maxLength: 1100 }), (b) => {
    const key = keyFromBytes(b);
    const cursor = encodeStreamCursor(key);
    assert.equal(cursor, Buffer.from(keyToBytes(key)).toString('base64url'));
    assert.equal(decodeStreamCursor(cursor), key);
  }), { numRuns: 3000 });
  assert.equal(encodeStreamCursor(''), '');
  assert.equal(decodeStreamCursor(null), '');
});

test('any cursor in the alphabet decodes as Node decodes base64url (a final lone character dropped)', () => {
  const alphabet = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');
  fc.assert(fc.property(fc.string({ unit: alphabet, minLength: 1, maxLength: 60 }), (c) => {
    assert.equal(decodeStreamCursor(c), keyFromBytes(Buffer.from(c, 'base64url')));
  }), { numRuns: 5000 });
  assert.throws(() => decodeStreamCursor('a+b'), { code: 'invalid_argument' });
});

test('bucket names: 1-128 of A-Z a-z 0-9 . _ -, starting with a letter or digit', () => {
  assert.ok(isBucketName('a') && isBucketName('A.b_c-9') && isBucketName('x'.repeat(128)));
  for (const bad of ['', 'x'.repeat(129), '.a', '-a', 'a/b', 'é', 'a b']) assert.equal(isBucketName(bad), false, bad);
});
