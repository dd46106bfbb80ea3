// The hand-written google.rpc.Status codec against protobufjs's reference encoding of the same schema.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { decodeRpcStatus, encodeRpcStatus } from '../../src/api/grpc/rpc-status.ts';

const root = protobuf.Root.fromJSON({
  nested: {
    google: {
      nested: {
        rpc: { nested: { Status: { fields: { code: { type: 'int32', id: 1 }, message: { type: 'string', id: 2 }, details: { rule: 'repeated', type: 'google.protobuf.Any', id: 3 } } } } },
        protobuf: { nested: { Any: { fields: { type_url: { type: 'string', id: 1 }, value: { type: 'bytes', id: 2 } } } } },
      },
    },
  },
});
const Status = root.lookupType('google.rpc.Status');

describe('google.rpc.Status codec', () => {
  const sample = {
    code: 11,
    message: 'match_seq_num mismatch: é',
    details: [
      { type_url: 'type.googleapis.com/svc.v1.SequenceDetail', value: Buffer.from([0x0a, 0x02, 0x08, 0x03]) },
      { type_url: 'type.googleapis.com/x', value: Buffer.alloc(300, 7) },
    ],
  };

  it('encodes exactly what protobufjs encodes', () => {
    const ours = encodeRpcStatus(sample);
    const theirs = Buffer.from(Status.encode(Status.fromObject(sample)).finish());
    assert.deepEqual(ours, theirs);
  });

  it('decodes protobufjs output, skipping unknown fields', () => {
    const theirs = Buffer.from(Status.encode(Status.fromObject(sample)).finish());
    const withUnknown = Buffer.concat([theirs, Buffer.from([(9 << 3) | 0, 0x96, 0x01, (10 << 3) | 2, 1, 0x61])]);
    const got = decodeRpcStatus(withUnknown);
    assert.equal(got.code, 11);
    assert.equal(got.message, sample.message);
    assert.deepEqual(got.details.map((d) => [d.type_url, Buffer.from(d.value)]), sample.details.map((d) => [d.type_url, d.value]));
  });

  it('round-trips an empty status and rejects truncated input', () => {
    assert.deepEqual(decodeRpcStatus(encodeRpcStatus({ code: 0, message: '', details: [] })), { code: 0, message: '', details: [] });
    const bytes = encodeRpcStatus(sample);
    assert.throws(() => decodeRpcStatus(bytes.subarray(0, bytes.length - 3)), RangeError);
  });
});
