// The append decoder's fast path (decodePlainAppend) must agree with JSON.parse on every body it
// accepts, accept the canonical shape it exists for, and leave everything else to the general path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeAppend, decodePlainAppend } from '../../src/api/wire.ts';
import { rng } from '../helpers/rng.ts';

const printable = (r: () => number, n: number): string => {
  let s = '';
  for (let i = 0; i < n; i++) {
    let c = 0x20 + Math.floor(r() * 95);
    if (c === 0x22 || c === 0x5c) c = 0x41; // no quote or backslash: those need escapes
    s += String.fromCharCode(c);
  }
  return s;
};

const canonical = (bodies: string[]): Buffer => Buffer.from(`{"records":[${bodies.map((b) => `{"body":"${b}"}`).join(',')}]}`);

/** What JSON.parse makes of a body, when it has exactly the fast path's shape; undefined otherwise. */
function viaJsonParse(b: Buffer): Buffer[] | undefined {
  let v: unknown;
  try { v = JSON.parse(b.toString('utf8')); } catch { return undefined; }
  if (v === null || typeof v !== 'object' || Object.keys(v).join() !== 'records') return undefined;
  const recs = (v as { records: unknown }).records;
  if (!Array.isArray(recs) || recs.length === 0) return undefined;
  const out: Buffer[] = [];
  for (const r of recs) {
    if (r === null || typeof r !== 'object' || Object.keys(r).join() !== 'body' || typeof (r as { body: unknown }).body !== 'string') return undefined;
    out.push(Buffer.from((r as { body: string }).body, 'utf8'));
  }
  return out;
}

test('canonical bodies of printable ASCII take the fast path and decode to the same bytes as JSON.parse', () => {
  const r = rng(1);
  for (let n = 0; n < 500; n++) {
    const bodies = Array.from({ length: 1 + Math.floor(r() * 5) }, () => printable(r, Math.floor(r() * 200)));
    const b = canonical(bodies);
    const fast = decodePlainAppend(b);
    assert.ok(fast, `seed 1 case ${n}: not taken: ${b.toString()}`);
    assert.deepEqual(fast.map((x) => Buffer.from(x.body)), viaJsonParse(b));
    assert.ok(fast.every((x) => x.headers.length === 0 && x.timestamp_ms === undefined));
    assert.deepEqual(decodeAppend(b).records.map((x) => Buffer.from(x.body).toString()), bodies);
  }
});

test('mutated bodies: the fast path accepts only what JSON.parse reads the same way, else leaves it to the general path', () => {
  const r = rng(2);
  const noise = [' ', '\\', '"', '\\"', '\\n', '\n', '\t', 'é', '\u2028', '{', '}', ',', ']', '[', ':', '\u0000', '"x":1', '\\u0041'];
  let fastTaken = 0;
  for (let n = 0; n < 4000; n++) {
    const base = canonical(Array.from({ length: 1 + Math.floor(r() * 3) }, () => printable(r, Math.floor(r() * 12)))).toString();
    let s = base;
    for (let k = 0, edits = 1 + Math.floor(r() * 2); k < edits; k++) {
      const at = Math.floor(r() * (s.length + 1));
      const op = r();
      if (op < 0.5) s = s.slice(0, at) + noise[Math.floor(r() * noise.length)] + s.slice(at);
      else if (op < 0.8) s = s.slice(0, at) + s.slice(at + 1);
      else s = s.slice(0, at);
    }
    const b = Buffer.from(s);
    const fast = decodePlainAppend(b);
    const ref = viaJsonParse(b);
    if (fast) {
      fastTaken++;
      assert.ok(ref, `seed 2 case ${n}: fast path accepted what JSON.parse does not read as records: ${JSON.stringify(s)}`);
      assert.deepEqual(fast.map((x) => Buffer.from(x.body)), ref, `seed 2 case ${n}: ${JSON.stringify(s)}`);
    }
    // Whatever path a body takes, decodeAppend's answer matches JSON.parse's reading or is a 400.
    let decoded: Buffer[] | undefined;
    try { decoded = decodeAppend(b).records.map((x) => Buffer.from(x.body)); } catch (err) {
      assert.equal((err as { code?: string }).code, 'invalid_argument', `seed 2 case ${n}: ${JSON.stringify(s)}: ${String(err)}`);
    }
    if (decoded && ref) assert.deepEqual(decoded, ref);
  }
  assert.ok(fastTaken > 0, 'some mutations (such as a deleted body byte) stay on the fast path');
});

test('shapes the fast path refuses and the general path still serves or refuses', () => {
  const cases: [string, boolean][] = [
    ['{"records":[{"body":"a"}]} ', true], // trailing space: JSON allows it
    ['{ "records":[{"body":"a"}]}', true],
    ['{"records":[{"body":"a","timestamp_ms":5}]}', true],
    ['{"records":[{"body":"a\\u0041"}]}', true],
    ['{"records":[{"body":"caf\u00e9"}]}', true],
    ['{"records":[{"body":"a"}],"match_seq_num":0}', true],
    ['{"records":[]}', false],
    ['{"records":[{"body":"a"}]}x', false],
    ['{"records":[{"body":"a"},]}', false],
    ['{"records":[{"body":"a"}]', false],
    ['{"records":[{"body":"a\tb"}]}', false], // a raw control character is not JSON
  ];
  for (const [s, ok] of cases) {
    assert.equal(decodePlainAppend(Buffer.from(s)), undefined, s);
    if (ok) assert.ok(decodeAppend(Buffer.from(s)).records.length === 1, s);
    else assert.throws(() => decodeAppend(Buffer.from(s)), /./, s);
  }
});

test('an oversized field is refused by name, before later records are looked at', () => {
  const big = 'x'.repeat(1024 * 1024 + 1);
  assert.throws(() => decodeAppend(Buffer.from(`{"records":[{"body":"${big}"}]}`)), /records\[0\]\.body is longer than 1048576 bytes/);
  assert.throws(() => decodeAppend(Buffer.from(`{"records":[{"body":"${big}"},{"body":5}]}`)), /records\[0\]\.body is longer than/);
  // Three UTF-8 bytes per unit: under the limit in UTF-16 units, over it in bytes.
  const wide = '\u20ac'.repeat(400_000);
  assert.throws(() => decodeAppend(Buffer.from(`{"records":[{"body":"a","headers":[{"name":"${wide}"}]}]}`)), /records\[0\]\.headers\[0\]\.name is longer than/);
});

test('long bodies: a control byte anywhere, at any alignment, leaves the body to the general path', () => {
  const r = rng(3);
  for (let n = 0; n < 600; n++) {
    const len = 400 + Math.floor(r() * 3000);
    const text = printable(r, len);
    const clean = canonical([text, printable(r, Math.floor(r() * 50))]);
    assert.ok(decodePlainAppend(clean), `seed 3 case ${n}: a clean ${len}-byte body is taken`);
    // Shift the body's alignment in its ArrayBuffer too: the word scan reads through an aligned view.
    const shift = Math.floor(r() * 4);
    const at = 21 + Math.floor(r() * len);
    const dirty = Buffer.from(clean);
    dirty[at] = Math.floor(r() * 0x20);
    const holder = Buffer.alloc(dirty.length + shift);
    dirty.copy(holder, shift);
    const view = holder.subarray(shift);
    assert.equal(decodePlainAppend(view), undefined, `seed 3 case ${n}: control byte ${view[at]} at ${at} of ${view.length} (shift ${shift})`);
    assert.throws(() => decodeAppend(view), /malformed JSON|must be/);
  }
});
