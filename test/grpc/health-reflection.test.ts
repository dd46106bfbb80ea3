// The standard gRPC health service and server reflection on a real star's gRPC listener, called as
// outside tools call them: the health schema and the reflection schema loaded from their own .proto
// files (reflection's from the @grpc/reflection package, as grpcurl speaks it), not svcd's client.
//   - Check answers SERVING for "" and both svc.v1 services, NOT_FOUND for a name it does not serve;
//   - both are open under --auth jwt: no credential is asked, while a data verb still is;
//   - Watch tells a stopping star's watchers NOT_SERVING before the stream ends;
//   - reflection lists the services and describes svc.v1.DataService well enough to find Append.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import descriptor from 'protobufjs/ext/descriptor/index.js';
import { create, createFileRegistry, fromBinary, toBinary, toJson } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { PROTO_ROOT } from '../../src/api/grpc/proto.ts';
import { startGrpcChild, type GrpcChild } from './child.ts';
import { bytes } from './client.ts';

const require = createRequire(import.meta.url);
const REFLECTION_PROTO_ROOT = join(dirname(require.resolve('@grpc/reflection/package.json')), 'build', 'proto');
/** A stopping star's watcher hears from it within this long, or the test fails instead of hanging. */
const WATCH_END_WAIT_MS = 15_000;

type Ctor = grpc.ServiceClientConstructor;
interface HealthClient extends grpc.Client {
  Check(req: { service: string }, cb: (err: grpc.ServiceError | null, res?: { status: string }) => void): void;
  Watch(req: { service: string }): grpc.ClientReadableStream<{ status: string }>;
}
interface ReflectionResponse {
  list_services_response?: { service: { name: string }[] };
  file_descriptor_response?: { file_descriptor_proto: Buffer[] };
  error_response?: { error_code: number; error_message: string };
}

function healthClient(port: number): HealthClient {
  const def = protoLoader.loadSync('grpc/health/v1/health.proto', { includeDirs: [PROTO_ROOT], keepCase: true, enums: String, defaults: true });
  const Health = (grpc.loadPackageDefinition(def) as unknown as { grpc: { health: { v1: { Health: Ctor } } } }).grpc.health.v1.Health;
  return new Health(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as HealthClient;
}

function check(c: HealthClient, service: string): Promise<{ status?: string; code?: number }> {
  return new Promise((resolve) => c.Check({ service }, (err, res) => resolve(err ? { code: err.code } : { status: res?.status })));
}

/** One ServerReflectionInfo exchange (the protocol is a bidi stream of request/response pairs). */
function reflect(port: number, version: 'v1' | 'v1alpha', req: Record<string, string>): Promise<ReflectionResponse> {
  const def = protoLoader.loadSync(`grpc/reflection/${version}/reflection.proto`, { includeDirs: [REFLECTION_PROTO_ROOT], keepCase: true, defaults: true, oneofs: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as { grpc: { reflection: Record<string, { ServerReflection: Ctor }> } };
  const client = new pkg.grpc.reflection[version].ServerReflection(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as
    grpc.Client & { ServerReflectionInfo(): grpc.ClientDuplexStream<Record<string, string>, ReflectionResponse> };
  return new Promise((resolve, reject) => {
    const call = client.ServerReflectionInfo();
    call.on('data', (res: ReflectionResponse) => { resolve(res); call.end(); });
    call.on('error', (err) => { reject(err); });
    call.on('end', () => client.close());
    call.write(req);
  });
}

describe('grpc.health.v1 and server reflection (real star, --auth jwt)', () => {
  let star: GrpcChild;
  before(async () => { star = await startGrpcChild({ jwt: true }); });
  after(async () => { await star?.stop(); });

  test('Check: SERVING for the server and its services, NOT_FOUND for another name; no credential asked', async () => {
    const c = healthClient(star.grpcPort);
    try {
      for (const service of ['', 'svc.v1.DataService', 'svc.v1.AdminService']) {
        assert.deepEqual(await check(c, service), { status: 'SERVING' }, `service '${service}'`);
      }
      assert.deepEqual(await check(c, 'svc.v1.NoSuchService'), { code: grpc.status.NOT_FOUND });
    } finally {
      c.close();
    }
    // The same listener still refuses a data verb without a token: only health and reflection are open.
    const r = await new Promise<grpc.ServiceError | null>((resolve) => {
      star.data.CheckTail({ bucket: 'b', key: bytes('k') }, (err: grpc.ServiceError | null) => resolve(err));
    });
    assert.equal(r?.code, grpc.status.UNAUTHENTICATED);
  });

  test('reflection (v1 and v1alpha) lists the services and describes DataService with its verbs', async () => {
    for (const version of ['v1', 'v1alpha'] as const) {
      const listed = await reflect(star.grpcPort, version, { list_services: '*' });
      const names = (listed.list_services_response?.service ?? []).map((s) => s.name).sort();
      for (const want of ['grpc.health.v1.Health', 'svc.v1.AdminService', 'svc.v1.DataService']) {
        assert.ok(names.includes(want), `${version} lists ${want}: ${names.join(', ')}`);
      }
      const described = await reflect(star.grpcPort, version, { file_containing_symbol: 'svc.v1.DataService' });
      const files = (described.file_descriptor_response?.file_descriptor_proto ?? []).map((b) => descriptor.FileDescriptorProto.decode(b) as unknown as {
        package: string; service: { name: string; method: { name: string }[] }[];
      });
      const dataService = files.flatMap((f) => f.service.map((s) => ({ pkg: f.package, ...s }))).find((s) => s.pkg === 'svc.v1' && s.name === 'DataService');
      assert.ok(dataService, `${version}: a descriptor of svc.v1.DataService`);
      const methods = dataService.method.map((m) => m.name);
      for (const verb of ['Append', 'Read', 'CheckTail', 'AppendSession']) assert.ok(methods.includes(verb), `${version}: DataService has ${verb}`);
      const unknown = await reflect(star.grpcPort, version, { file_containing_symbol: 'svc.v1.Nothing' });
      assert.equal(unknown.error_response?.error_code, grpc.status.NOT_FOUND);
    }
  });

  test('reflected descriptors load in protobuf-es (buf): qualified type names, optional fields marked; a message round-trips', async () => {
    for (const version of ['v1', 'v1alpha'] as const) {
      const files: Uint8Array[] = [];
      for (const symbol of ['svc.v1.DataService', 'svc.v1.AdminService', 'grpc.health.v1.Health']) {
        const r = await reflect(star.grpcPort, version, { file_containing_symbol: symbol });
        files.push(...(r.file_descriptor_response?.file_descriptor_proto ?? []));
      }
      const seen = new Set<string>();
      const set = create(FileDescriptorSetSchema, {
        file: files.map((b) => fromBinary(FileDescriptorProtoSchema, b)).filter((f) => !seen.has(f.name) && seen.add(f.name) !== undefined),
      });
      // protobuf-es resolves nothing itself: a relative type_name (`Position`) fails here.
      const registry = createFileRegistry(set);
      const append = registry.getService('svc.v1.DataService')?.methods.find((m) => m.name === 'Append');
      assert.ok(append, `${version}: DataService.Append is in the registry`);
      const request = append.input;
      const matchSeqNum = request.fields.find((f) => f.name === 'match_seq_num');
      assert.equal(matchSeqNum?.proto.proto3Optional, true, `${version}: match_seq_num is proto3 optional`);
      assert.equal(request.oneofs.length, 0, `${version}: no synthetic oneof shows as a real one`);
      const msg = create(request, { bucket: 'b', key: new TextEncoder().encode('k'), records: [{ body: new TextEncoder().encode('hi') }], matchSeqNum: 7n });
      const back = fromBinary(request, toBinary(request, msg)) as unknown as { bucket: string; matchSeqNum?: bigint };
      assert.equal(back.bucket, 'b');
      assert.equal(back.matchSeqNum, 7n);
      // Every field carries protoc's json_name, so the message's JSON has its proper keys.
      assert.equal(matchSeqNum?.jsonName, 'matchSeqNum', `${version}: json_name is protoc's`);
      assert.deepEqual(Object.keys(toJson(request, msg) as object).sort(), ['bucket', 'key', 'matchSeqNum', 'records'], `${version}: JSON keys`);
    }
  });

  test('Watch: the status at once, NOT_SERVING when the star stops, then a clean end; an unknown name is SERVICE_UNKNOWN', { timeout: 60_000 }, async () => {
    const own = await startGrpcChild({ jwt: true });
    const c = healthClient(own.grpcPort);
    /** Every status a watch saw, then how it ended: 'end' (the server closed it with OK) or the error's code. */
    const watchOf = (service: string, onFirst: () => void): { seen: string[]; ended: Promise<string> } => {
      const seen: string[] = [];
      const ended = new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`watch '${service}' neither changed nor ended in ${WATCH_END_WAIT_MS} ms: ${seen.join(', ')}`)), WATCH_END_WAIT_MS);
        const call = c.Watch({ service });
        call.on('data', (m: { status: string }) => { seen.push(m.status); if (seen.length === 1) onFirst(); });
        call.on('end', () => { clearTimeout(timer); resolve('end'); });
        call.on('error', (err: grpc.ServiceError) => { clearTimeout(timer); resolve(`error ${grpc.status[err.code]}`); });
      });
      return { seen, ended };
    };
    try {
      let firsts = 0;
      // Stop the star once both watches have their first answer.
      const both = (): void => { if (++firsts === 2) void own.server.stop(); };
      const server = watchOf('', both);
      const unknown = watchOf('svc.v1.NoSuchService', both);
      // Both are ended by the stopping star itself (status OK), not cut when its process exits.
      assert.equal(await server.ended, 'end');
      assert.equal(await unknown.ended, 'end');
      assert.deepEqual(server.seen, ['SERVING', 'NOT_SERVING']);
      assert.deepEqual(unknown.seen, ['SERVICE_UNKNOWN']);
    } finally {
      c.close();
      await own.stop();
    }
  });
});
