// The descriptors server reflection serves name every type as protoc would, fully qualified, and the
// one protobufjs resolved: its own relative spelling ignores shadowing (a field of the package's
// `Inner` declared inside a message with an `Inner` of its own). Found by review of the rewriter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { qualifiedDescriptors, resolvedReferences } from '../../src/api/grpc/reflection-descriptors.ts';

const SHADOWED = `syntax = "proto3";
package t.v1;
message Inner { string a = 1; }
message Outer {
  message Inner { int32 b = 1; }
  .t.v1.Inner top = 1;
  Inner mine = 2;
  optional uint64 maybe = 3;
  oneof pick { string x = 4; int32 y = 5; }
}
service S { rpc Do(Outer) returns (.t.v1.Inner); }
`;

interface Field { name: string; typeName?: string; oneofIndex?: number; proto3Optional?: boolean }
interface File { messageType: { name: string; field: Field[]; oneofDecl: { name: string }[] }[]; service: { method: { outputType: string }[] }[] }

function served(dir: string, resolved?: ReadonlyMap<string, string>): File {
  const def = qualifiedDescriptors(protoLoader.loadSync('t.proto', { includeDirs: [dir], keepCase: true }), resolved);
  const bin = (def['t.v1.Outer'] as { fileDescriptorProtos: Buffer[] }).fileDescriptorProtos[0];
  return descriptor.FileDescriptorProto.decode(bin) as unknown as File;
}

test('a shadowed name is served as the type protobufjs resolved; optional and oneof fields keep their shape', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svcd-refl-'));
  try {
    writeFileSync(join(dir, 't.proto'), SHADOWED);
    const file = served(dir, resolvedReferences(['t.proto'], dir));
    const outer = file.messageType.find((m) => m.name === 'Outer')!;
    const field = (n: string): Field => outer.field.find((f) => f.name === n)!;
    assert.equal(field('top').typeName, '.t.v1.Inner');
    assert.equal(field('mine').typeName, '.t.v1.Outer.Inner');
    assert.equal(file.service[0].method[0].outputType, '.t.v1.Inner');
    // The real oneof first, the synthetic one of `optional maybe` after it.
    assert.deepEqual(outer.oneofDecl.map((o) => o.name), ['pick', '_maybe']);
    assert.equal(field('maybe').proto3Optional, true);
    assert.equal(field('maybe').oneofIndex, 1);
    assert.equal(field('x').oneofIndex, 0);
    assert.notEqual(field('x').proto3Optional, true);
    // By scoping rules alone, protobufjs's spelling of `top` would name Outer's own Inner.
    assert.equal(served(dir).messageType.find((m) => m.name === 'Outer')!.field.find((f) => f.name === 'top')!.typeName, '.t.v1.Outer.Inner');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
