// The hand-written append decoders (src/api/grpc/append-decode.ts) against protobufjs, the decoder
// they replace: random messages built field by field (fields in any order, singular fields repeated,
// unknown fields of every wire type, groups included, 64-bit values past 2^53, UTF-8 strings) must
// decode to the same objects; truncated ones must be refused by both or read alike; and what protobuf
// refuses is refused. A failure names its seed.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { appendDecoders, decodeAppendRequest, decodeAppendSessionRequest, MESSAGE_FIELDS_MAX, offThreadBytes, undecodable } from '../../src/api/grpc/append-decode.ts';
import { loadSvcProto } from '../../src/api/grpc/proto.ts';
import { rng } from '../helpers/rng.ts';

const SEEDS = 400;

const { packageDefinition } = loadSvcProto();
const protobufjs = {
  append: (packageDefinition['svc.v1.AppendRequest'] as unknown as { deserialize(b: Buffer): unknown }).deserialize,
  session: (packageDefinition['svc.v1.AppendSessionRequest'] as unknown as { deserialize(b: Buffer): unknown }).deserialize,
};

// ---- A small protobuf writer: each field is its own Buffer, so a message is any order of them ----

function varint(v: bigint): Buffer {
  const out: number[] = [];
  let x = BigInt.asUintN(64, v);
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
  return Buffer.from(out);
}
const tag = (field: number, wire: number): Buffer => varint(BigInt((field << 3) | wire));
const lenField = (field: number, body: Buffer): Buffer => Buffer.concat([tag(field, 2), varint(BigInt(body.length)), body]);
const varintField = (field: number, v: bigint): Buffer => Buffer.concat([tag(field, 0), varint(v)]);

class Gen {
  constructor(readonly r: () => number) {}
  int(n: number): number { return Math.floor(this.r() * n); }
  pick<T>(xs: readonly T[]): T { return xs[this.int(xs.length)]; }
  bytes(max: number): Buffer { return this.fixed(this.int(max + 1)); }
  fixed(n: number): Buffer { return Buffer.from(Array.from({ length: n }, () => this.int(256))); }
  u64(): bigint {
    return this.pick([
      () => BigInt(this.int(1000)),
      () => BigInt(this.int(2 ** 31)) * BigInt(this.int(2 ** 31)),
      () => (1n << 63n) + BigInt(this.int(1000)), // negative as int64
      () => (1n << 64n) - 1n - BigInt(this.int(1000)),
      () => (1n << 53n) + BigInt(this.int(1000)),
    ])();
  }
  text(): string { return this.pick(['', 'b', 'bucket-1', 'ünï-cødé', '日本語', 'a'.repeat(this.int(300)), '\u{1f600}x']); }

  /** An unknown field (numbers 16-40 are unused by these messages), of any wire type. */
  unknown(depth = 0): Buffer {
    const f = 16 + this.int(24);
    switch (this.int(depth < 3 ? 5 : 4)) {
      case 0: return varintField(f, this.u64());
      case 1: return Buffer.concat([tag(f, 1), this.fixed(8)]);
      case 2: return lenField(f, this.bytes(20));
      case 3: return Buffer.concat([tag(f, 5), this.fixed(4)]);
      default: {
        const inner = Array.from({ length: this.int(3) }, () => this.unknown(depth + 1));
        return Buffer.concat([tag(f, 3), ...inner, tag(f, 4)]);
      }
    }
  }

  /** A message: its fields shuffled, some unknown ones among them. */
  message(fields: Buffer[]): Buffer {
    const all = [...fields, ...Array.from({ length: this.int(3) }, () => this.unknown())];
    for (let i = all.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [all[i], all[j]] = [all[j], all[i]];
    }
    return Buffer.concat(all);
  }

  /** Each field of a singular value: absent, once, or (last one wins) twice. */
  maybe(make: () => Buffer): Buffer[] { return Array.from({ length: this.pick([0, 1, 1, 2]) }, make); }

  header(): Buffer {
    return this.message([...this.maybe(() => lenField(1, this.bytes(6))), ...this.maybe(() => lenField(2, this.bytes(6)))]);
  }
  record(): Buffer {
    const headers = Array.from({ length: this.pick([0, 0, 1, 3]) }, () => lenField(2, this.header()));
    return this.message([...this.maybe(() => varintField(1, this.u64())), ...headers, ...this.maybe(() => lenField(3, this.bytes(40)))]);
  }
  records(field: number): Buffer[] { return Array.from({ length: this.int(5) }, () => lenField(field, this.record())); }

  appendRequest(): Buffer {
    return this.message([
      ...this.maybe(() => lenField(1, Buffer.from(this.text()))),
      ...this.maybe(() => lenField(2, this.bytes(12))),
      ...this.records(3),
      ...this.maybe(() => varintField(4, this.u64())),
      ...this.maybe(() => lenField(5, Buffer.from(this.text()))),
    ]);
  }
  sessionRequest(): Buffer {
    const open = (): Buffer => lenField(1, this.message([
      ...this.maybe(() => lenField(1, Buffer.from(this.text()))),
      ...this.maybe(() => lenField(2, this.bytes(12))),
      ...this.maybe(() => lenField(3, Buffer.from(this.text()))),
    ]));
    const batch = (): Buffer => lenField(2, this.message([...this.records(1), ...this.maybe(() => varintField(2, this.u64()))]));
    // One member of the oneof, possibly sent twice (the later one stands), or none.
    return this.message(this.pick([[], [open()], [batch()], [batch(), batch()], [open(), open()]]));
  }
}

/** Comparable form: Buffers as hex, protobufjs's virtual `_field` markers of proto3 optionals dropped. */
function plain(v: unknown): unknown {
  if (Buffer.isBuffer(v)) return `hex:${v.toString('hex')}`;
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object' && v !== null) {
    return Object.fromEntries(Object.entries(v).filter(([k, x]) => !k.startsWith('_') && x !== undefined).map(([k, x]) => [k, plain(x)]));
  }
  return v;
}

function outcome(decode: (b: Buffer) => unknown, bytes: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: plain(decode(bytes)) };
  } catch {
    return { ok: false };
  }
}

describe('gRPC append decoders against protobufjs', () => {
  for (const [name, make, ours, theirs] of [
    ['AppendRequest', (g: Gen) => g.appendRequest(), decodeAppendRequest, protobufjs.append],
    ['AppendSessionRequest', (g: Gen) => g.sessionRequest(), decodeAppendSessionRequest, protobufjs.session],
  ] as const) {
    it(`${name}: ${SEEDS} random messages decode to the same objects, and so do their truncations`, () => {
      let truncationsRefused = 0;
      let truncationsRead = 0;
      for (let seed = 1; seed <= SEEDS; seed++) {
        const g = new Gen(rng(seed));
        const bytes = make(g);
        assert.deepEqual(plain(ours(bytes)), plain(theirs(bytes)), `seed ${seed}: ${bytes.toString('hex')}`);
        // A cut message: what protobufjs refuses is refused, and what is read is read alike.
        // protobufjs alone reads a string cut short as what is there (see the test below).
        const cut = bytes.subarray(0, g.int(bytes.length));
        const a = outcome(ours, cut);
        const b = outcome(theirs, cut);
        if (a.ok || !b.ok) assert.deepEqual(a, b, `seed ${seed}, cut at ${cut.length}: ${bytes.toString('hex')}`);
        if (a.ok) truncationsRead++;
        else truncationsRefused++;
      }
      // The cuts exercised both refusals and clean cuts at field boundaries.
      assert.ok(truncationsRefused > SEEDS / 4 && truncationsRead > SEEDS / 50, `${truncationsRefused} cuts refused, ${truncationsRead} read`);
    });
  }

  it('reads 64-bit values as protobufjs does: int64 timestamps in two\'s complement, uint64 unsigned, both past 2^53', () => {
    for (const v of [0n, 1n, (1n << 53n) + 1n, (1n << 63n) - 1n, 1n << 63n, (1n << 64n) - 1n]) {
      const rec = lenField(3, varintField(1, v));
      const msg = Buffer.concat([rec, varintField(4, v)]);
      const ours = decodeAppendRequest(msg);
      assert.deepEqual(plain(ours), plain(protobufjs.append(msg)), `value ${v}`);
      assert.equal(ours.records[0].timestamp_ms, Number(BigInt.asIntN(64, v)));
      assert.equal(ours.match_seq_num, Number(v));
    }
  });

  it('refuses what protobuf refuses: field number 0, wire types 6 and 7, a stray or mismatched end-group, groups nested too deep, a 11-byte varint, a length past the message', () => {
    const refused: [string, Buffer][] = [
      ['field 0', Buffer.from([0x00, 0x01])],
      ['wire type 6', Buffer.from([(20 << 3) | 6])],
      ['wire type 7', Buffer.from([(20 << 3) | 7])],
      ['stray end-group', tag(20, 4)],
      ['mismatched end-group', Buffer.concat([tag(20, 3), tag(21, 4)])],
      ['unterminated group', tag(20, 3)],
      ['groups 101 deep', Buffer.concat([...Array.from({ length: 101 }, () => tag(20, 3)), ...Array.from({ length: 101 }, () => tag(20, 4))])],
      ['11-byte varint', Buffer.concat([tag(4, 0), Buffer.alloc(10, 0xff), Buffer.from([0x01])])],
      ['length past the end', Buffer.from([0x1a, 0x05, 0x00])],
    ];
    for (const [what, bytes] of refused) {
      assert.throws(() => decodeAppendRequest(bytes), Error, what);
      assert.throws(() => decodeAppendSessionRequest(Buffer.concat([tag(2, 2), varint(BigInt(bytes.length)), bytes])), Error, `${what} in a batch`);
    }
    // A record's field past the record's own length; a string cut short (protobufjs reads such a
    // string as the bytes there are, and so would have taken a bucket name the client never sent).
    assert.throws(() => decodeAppendRequest(Buffer.concat([tag(3, 2), Buffer.from([0x02, 0x1a, 0x05])])));
    const cutBucket = Buffer.concat([tag(1, 2), Buffer.from([0x0c]), Buffer.from('abc')]);
    assert.throws(() => decodeAppendRequest(cutBucket));
    assert.deepEqual(plain(protobufjs.append(cutBucket)), { bucket: 'abc', key: 'hex:', records: [] });
    // 100 nested groups are within the bound.
    const deep = Buffer.concat([...Array.from({ length: 100 }, () => tag(20, 3)), ...Array.from({ length: 100 }, () => tag(20, 4))]);
    assert.deepEqual(plain(decodeAppendRequest(deep)), { bucket: '', key: 'hex:', records: [] });
  });

  it(`refuses a message or batch of more than ${MESSAGE_FIELDS_MAX} fields, read whole or shallowly; a full batch of records passes`, () => {
    const shallow = appendDecoders(1024);
    const unknowns = (n: number): Buffer => Buffer.concat(Array.from({ length: n }, () => Buffer.from([(15 << 3) | 0, 0x01])));
    const full = Buffer.concat([lenField(1, Buffer.from('b')), ...Array.from({ length: MESSAGE_FIELDS_MAX - 1 }, () => lenField(3, Buffer.alloc(0)))]);
    assert.equal(decodeAppendRequest(full).records.length, MESSAGE_FIELDS_MAX - 1);
    const read = shallow.append(full);
    assert.equal(read.records.length, 0, 'shallow: the records are left for the worker');
    assert.equal(read.bucket, 'b');
    assert.equal(offThreadBytes(read), full);
    for (const over of [Buffer.concat([full, unknowns(1)]), unknowns(MESSAGE_FIELDS_MAX + 1)]) {
      assert.throws(() => decodeAppendRequest(over), /more than \d+ fields in one message/);
      assert.throws(() => shallow.append(over), /more than \d+ fields in one message/);
      const batch = Buffer.concat([tag(2, 2), varint(BigInt(over.length)), over]);
      assert.match(undecodable(shallow.session(batch)) ?? '', /more than \d+ fields in one message/);
    }
  });

  it('skips a known field sent with another wire type, as an unknown one', () => {
    // `body` (3) as a varint and `bucket` (1) as a fixed32: neither is read.
    const msg = Buffer.concat([lenField(3, Buffer.concat([varintField(3, 5n), lenField(3, Buffer.from('kept'))])), tag(1, 5), Buffer.alloc(4)]);
    assert.deepEqual(plain(decodeAppendRequest(msg)), { bucket: '', key: 'hex:', records: [{ headers: [], body: `hex:${Buffer.from('kept').toString('hex')}` }] });
  });
});
