// The append decoder's two paths (the byte-level fast path and JSON.parse) against bytes that are
// not UTF-8, text that is not Unicode, and unknown fields (issue 14, issue 18), as properties: every
// body is either decoded to exactly the bytes its JSON names, or refused with invalid_argument;
// the fast path never takes a body the general path would read differently.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { decodeAppend, decodePlainAppend, parseJsonObject } from '../../src/api/wire.ts';

/** Replays a failure: SVCD_WIRE_SEED=<seed>. */
const seed = Number(process.env.SVCD_WIRE_SEED ?? Date.now() % 2 ** 31);
const RUNS = 2000;

const refusal = (f: () => unknown): string | undefined => {
  try { f(); } catch (err) {
    assert.equal((err as { code?: string }).code, 'invalid_argument', String(err));
    return (err as Error).message;
  }
  return undefined;
};

test(`bytes that are not UTF-8 anywhere in a body are refused by both paths (seed ${seed})`, () => {
  fc.assert(fc.property(
    fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { minLength: 1, maxLength: 4 }),
    fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 3 }),
    (bodies, at, junk) => {
      const good = Buffer.from(JSON.stringify({ records: bodies.map((body) => ({ body })) }));
      const i = at % (good.length + 1);
      const b = Buffer.concat([good.subarray(0, i), Buffer.from(junk), good.subarray(i)]);
      if (isUtf8(b)) return; // the junk happened to be UTF-8: not this property's case
      assert.equal(decodePlainAppend(b), undefined, 'the fast path takes ASCII only');
      assert.match(refusal(() => decodeAppend(b)) ?? 'accepted', /not valid UTF-8/);
      assert.match(refusal(() => parseJsonObject(b, true)) ?? 'accepted', /not valid UTF-8/);
    },
  ), { seed, numRuns: RUNS });
});

test(`well-formed text decodes to its UTF-8 bytes on whichever path takes it (seed ${seed})`, () => {
  fc.assert(fc.property(
    fc.array(fc.oneof(fc.string({ maxLength: 30 }), fc.string({ unit: 'grapheme', maxLength: 12 })), { minLength: 1, maxLength: 5 }),
    (bodies) => {
      const b = Buffer.from(JSON.stringify({ records: bodies.map((body) => ({ body })) }));
      const want = bodies.map((s) => Buffer.from(s, 'utf8'));
      const fast = decodePlainAppend(b);
      if (fast) assert.deepEqual(fast.map((r) => Buffer.from(r.body)), want);
      assert.deepEqual(decodeAppend(b).records.map((r) => Buffer.from(r.body)), want);
    },
  ), { seed, numRuns: RUNS });
});

test(`a lone surrogate in any text field is refused, never stored as U+FFFD (seed ${seed})`, () => {
  fc.assert(fc.property(
    fc.string({ maxLength: 5 }), fc.constantFrom('\ud800', '\udfff', '\udc00\ud800'), fc.string({ maxLength: 5 }),
    fc.constantFrom('body', 'name', 'value'),
    (pre, lone, post, field) => {
      const s = pre + lone + post;
      const rec = field === 'body' ? { body: s } : { body: 'x', headers: [{ name: field === 'name' ? s : 'n', value: field === 'value' ? s : 'v' }] };
      const b = Buffer.from(JSON.stringify({ records: [rec] }));
      assert.ok(isUtf8(b), 'JSON.stringify escapes it: the bytes are valid UTF-8');
      assert.match(refusal(() => decodeAppend(b)) ?? 'accepted', /not valid Unicode/);
    },
  ), { seed, numRuns: RUNS / 4 });
});

test(`any field a record or header does not define is refused by name (seed ${seed})`, () => {
  const known = new Set(['body', 'body_b64', 'headers', 'timestamp_ms', 'name', 'name_b64', 'value', 'value_b64']);
  fc.assert(fc.property(
    fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !known.has(k)), fc.boolean(),
    (extra, inHeader) => {
      const rec = inHeader ? { body: 'x', headers: [{ name: 'n', [extra]: 1 }] } : { body: 'x', [extra]: 1 };
      const msg = refusal(() => decodeAppend(Buffer.from(JSON.stringify({ records: [rec] }))));
      assert.ok(msg?.includes(`unknown field ${extra}`), `${JSON.stringify(rec)}: ${msg}`);
    },
  ), { seed, numRuns: RUNS / 4 });
});
