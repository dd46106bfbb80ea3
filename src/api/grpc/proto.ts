// Loads proto/svc/v1/*.proto at runtime with @grpc/proto-loader and exposes the typed service
// definitions (types generated into src/gen by scripts/gen-proto.mjs) and the error-detail codecs.
// LOADER_OPTIONS must match the generator's flags, or the generated types lie about the runtime shapes.

import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { MessageTypeDefinition } from '@grpc/proto-loader';
import type { ProtoGrpcType as DataProto } from '../../gen/data.ts';
import type { ProtoGrpcType as AdminProto } from '../../gen/admin.ts';
import type { FenceDetail, FenceDetail__Output } from '../../gen/svc/v1/FenceDetail.ts';
import type { NotOwnerDetail, NotOwnerDetail__Output } from '../../gen/svc/v1/NotOwnerDetail.ts';
import type { SequenceDetail, SequenceDetail__Output } from '../../gen/svc/v1/SequenceDetail.ts';

/** Root of the .proto tree (imports are written `svc/v1/…` relative to it): the nearest `proto/`
 *  above this module, so the sources (src/api/grpc/) and the esbuild bundle (src/) both find it. */
export const PROTO_ROOT = findProtoRoot(dirname(fileURLToPath(import.meta.url)));

function findProtoRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, 'proto');
    if (existsSync(join(candidate, 'svc', 'v1'))) return candidate;
    if (dirname(dir) === dir) throw new Error(`proto/svc/v1 not found above ${from}`);
  }
}

/** The loader's shapes: snake_case fields, 64-bit integers as JS numbers, enums as their names,
 *  defaults filled for scalars (not for `optional` fields, whose absence stays undefined), and a
 *  virtual field naming the set member of each oneof. Bytes arrive as Buffers. */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
};

export type SvcProto = DataProto & AdminProto;

export interface LoadedProto {
  proto: SvcProto;
  /** The loader's definition of svc.v1 (server reflection describes it). */
  packageDefinition: protoLoader.PackageDefinition;
  sequenceDetail: MessageTypeDefinition<SequenceDetail, SequenceDetail__Output>;
  fenceDetail: MessageTypeDefinition<FenceDetail, FenceDetail__Output>;
  notOwnerDetail: MessageTypeDefinition<NotOwnerDetail, NotOwnerDetail__Output>;
}

let loaded: LoadedProto | undefined;

/** The svc.v1 schema's files, relative to PROTO_ROOT. */
export function svcProtoFiles(): string[] {
  return readdirSync(join(PROTO_ROOT, 'svc', 'v1'))
    .filter((f) => f.endsWith('.proto'))
    .sort()
    .map((f) => `svc/v1/${f}`);
}

/** The svc.v1 schema, loaded once per process. */
export function loadSvcProto(): LoadedProto {
  if (loaded) return loaded;
  const def = protoLoader.loadSync(svcProtoFiles(), LOADER_OPTIONS);
  loaded = {
    proto: grpc.loadPackageDefinition(def) as unknown as SvcProto,
    packageDefinition: def,
    sequenceDetail: def['svc.v1.SequenceDetail'] as MessageTypeDefinition<SequenceDetail, SequenceDetail__Output>,
    fenceDetail: def['svc.v1.FenceDetail'] as MessageTypeDefinition<FenceDetail, FenceDetail__Output>,
    notOwnerDetail: def['svc.v1.NotOwnerDetail'] as MessageTypeDefinition<NotOwnerDetail, NotOwnerDetail__Output>,
  };
  return loaded;
}
