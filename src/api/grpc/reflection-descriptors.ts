// The file descriptors server reflection serves, made to read as protoc's would. @grpc/proto-loader
// builds them with protobufjs, which writes type references as they were spelt in the .proto
// (`Position`, not `.svc.v1.Position`) and marks no field proto3_optional (an `optional` field comes
// out as a member of a one-field oneof `_name`). Go's grpcurl resolves such names itself, but
// clients that build a registry from the descriptors as sent (protobuf-es, buf's TypeScript runtime,
// anything reading `grpcurl -protoset-out`) refuse them: `type_name StarState not found`. So every
// reference is written fully qualified, optional fields are marked, and their synthetic oneofs go
// after the real ones, as protoc orders them. protoc also gives every field its json_name, which
// protobufjs leaves out: a registry built from the descriptors as sent (protobuf-es) then writes
// every field's JSON under an empty key. The qualified names are what protobufjs itself resolved
// the same files to (resolvedReferences): its relative spelling ignores shadowing (`Inner` may mean
// the package's Inner from inside a message with an Inner of its own), so re-resolving the text by
// protobuf's scoping rules is only the fallback (map entry types, which it names itself).

import { isAbsolute, join } from 'node:path';
import type * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import descriptorModule from 'protobufjs/ext/descriptor/index.js';

/** The parts of google.protobuf's descriptor messages (protobufjs's camel-cased decoding) this reads. */
interface FieldDescriptor { name: string; typeName?: string; oneofIndex?: number; proto3Optional?: boolean; jsonName?: string }
interface OneofDescriptor { name: string }
interface EnumDescriptor { name: string }
interface MessageDescriptor {
  name: string;
  field: FieldDescriptor[];
  nestedType: MessageDescriptor[];
  enumType: EnumDescriptor[];
  oneofDecl: OneofDescriptor[];
}
interface MethodDescriptor { name: string; inputType?: string; outputType?: string }
interface ServiceDescriptor { name: string; method: MethodDescriptor[] }
interface FileDescriptor {
  name: string;
  package?: string;
  messageType: MessageDescriptor[];
  enumType: EnumDescriptor[];
  service: ServiceDescriptor[];
}
interface Codec<T> {
  decode(bytes: Uint8Array): T;
  encode(message: T): { finish(): Uint8Array };
}

const { FileDescriptorProto } = descriptorModule as unknown as { FileDescriptorProto: Codec<FileDescriptor> };

/** protobufjs decodes unset fields as prototype defaults (`oneofIndex` 0, `typeName` ''): a field is
 *  set only if it is an own property, and only own properties are encoded. */
const has = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

/** Every reference protobufjs resolved in `files` (relative to `includeDir`), fully qualified:
 *  `.pkg.Msg.field` → its type, `.pkg.Svc.Method(` → its input, `.pkg.Svc.Method)` → its output. */
export function resolvedReferences(files: readonly string[], includeDir: string): Map<string, string> {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (isAbsolute(target) ? target : join(includeDir, target));
  root.loadSync([...files], { keepCase: true });
  root.resolveAll();
  const out = new Map<string, string>();
  const walk = (ns: protobuf.NamespaceBase): void => {
    for (const nested of ns.nestedArray) {
      if (nested instanceof protobuf.Type) {
        // A map field's descriptor names its entry type, not the value type protobufjs resolved.
        for (const f of nested.fieldsArray) if (f.resolvedType && !(f instanceof protobuf.MapField)) out.set(`${nested.fullName}.${f.name}`, f.resolvedType.fullName);
      } else if (nested instanceof protobuf.Service) {
        for (const m of nested.methodsArray) {
          if (m.resolvedRequestType) out.set(`${nested.fullName}.${m.name}(`, m.resolvedRequestType.fullName);
          if (m.resolvedResponseType) out.set(`${nested.fullName}.${m.name})`, m.resolvedResponseType.fullName);
        }
      }
      if (nested instanceof protobuf.Namespace) walk(nested);
    }
  };
  walk(root);
  return out;
}

/** `def` with each file descriptor rewritten (see above), taking names from `resolved` where it has
 *  them; files are decoded and encoded once each. */
export function qualifiedDescriptors(def: protoLoader.PackageDefinition, resolved: ReadonlyMap<string, string> = new Map()): protoLoader.PackageDefinition {
  const rewritten = new Map<string, Buffer>();
  const decoded = new Map<string, FileDescriptor>();
  /** Each entry lists the same files' bytes: their names, read once. */
  const nameOf = new Map<Buffer, string>();
  for (const entry of Object.values(def)) {
    for (const bin of protosOf(entry) ?? []) {
      if (nameOf.has(bin)) continue;
      const file = FileDescriptorProto.decode(bin);
      nameOf.set(bin, file.name);
      if (!decoded.has(file.name)) decoded.set(file.name, file);
    }
  }
  const known = new Set<string>();
  for (const file of decoded.values()) collectNames(file, known);
  for (const file of decoded.values()) {
    qualifyFile(file, known, resolved);
    rewritten.set(file.name, Buffer.from(FileDescriptorProto.encode(file).finish()));
  }
  const out: protoLoader.PackageDefinition = {};
  for (const [name, entry] of Object.entries(def)) {
    const bins = protosOf(entry);
    out[name] = bins === undefined ? entry : {
      ...entry,
      fileDescriptorProtos: bins.map((bin) => rewritten.get(nameOf.get(bin)!) ?? bin),
    } as typeof entry;
  }
  return out;
}

/** A definition's encoded file descriptors (a service's entry is a map of methods and has none). */
function protosOf(entry: protoLoader.AnyDefinition): Buffer[] | undefined {
  const bins = (entry as { fileDescriptorProtos?: unknown }).fileDescriptorProtos;
  return Array.isArray(bins) ? bins as Buffer[] : undefined;
}

const packageScope = (file: FileDescriptor): string => (file.package ? `.${file.package}` : '');

/** Every message and enum of `file`, fully qualified with a leading dot. */
function collectNames(file: FileDescriptor, into: Set<string>): void {
  const walk = (scope: string, messages: MessageDescriptor[], enums: EnumDescriptor[]): void => {
    for (const e of enums) into.add(`${scope}.${e.name}`);
    for (const m of messages) {
      const name = `${scope}.${m.name}`;
      into.add(name);
      walk(name, m.nestedType, m.enumType);
    }
  };
  walk(packageScope(file), file.messageType, file.enumType);
}

/** A field's JSON name as protoc makes it: each underscore dropped and the letter after it upper-cased. */
function jsonNameOf(name: string): string {
  return name.replace(/_+([a-z0-9]?)/g, (_, c: string) => c.toUpperCase());
}

/** A reference as protobuf resolves it from `scope`: the innermost enclosing scope that defines it. */
function resolve(ref: string | undefined, scope: string, known: ReadonlySet<string>): string | undefined {
  if (ref === undefined || ref === '' || ref.startsWith('.')) return ref;
  for (let s = scope; ; s = s.slice(0, s.lastIndexOf('.'))) {
    if (known.has(`${s}.${ref}`)) return `${s}.${ref}`;
    if (s === '') return ref; // unknown: left as written
  }
}

function qualifyFile(file: FileDescriptor, known: ReadonlySet<string>, resolved: ReadonlyMap<string, string>): void {
  const pkg = packageScope(file);
  const walk = (scope: string, messages: MessageDescriptor[]): void => {
    for (const m of messages) {
      const name = `${scope}.${m.name}`;
      for (const f of m.field) {
        if (has(f, 'typeName')) f.typeName = resolved.get(`${name}.${f.name}`) ?? resolve(f.typeName, name, known);
        if (!f.jsonName) f.jsonName = jsonNameOf(f.name);
      }
      markOptionals(m);
      walk(name, m.nestedType);
    }
  };
  walk(pkg, file.messageType);
  for (const s of file.service) {
    const svc = `${pkg}.${s.name}`;
    for (const method of s.method) {
      if (has(method, 'inputType')) method.inputType = resolved.get(`${svc}.${method.name}(`) ?? resolve(method.inputType, pkg, known);
      if (has(method, 'outputType')) method.outputType = resolved.get(`${svc}.${method.name})`) ?? resolve(method.outputType, pkg, known);
    }
  }
}

/** A oneof named `_x` holding only field `x` is proto3's synthetic oneof of `optional x`: the field
 *  is marked proto3_optional and the synthetic oneofs move after the real ones. */
function markOptionals(m: MessageDescriptor): void {
  if (m.oneofDecl.length === 0) return;
  const members = m.oneofDecl.map((_, i) => m.field.filter((f) => has(f, 'oneofIndex') && f.oneofIndex === i));
  const synthetic = m.oneofDecl.map((o, i) => members[i].length === 1 && o.name === `_${members[i][0].name}`);
  const order = [...m.oneofDecl.keys()].sort((a, b) => Number(synthetic[a]) - Number(synthetic[b]) || a - b);
  const newIndex = new Map(order.map((old, i) => [old, i]));
  for (const f of m.field) {
    if (!has(f, 'oneofIndex') || f.oneofIndex === undefined) continue;
    if (synthetic[f.oneofIndex]) f.proto3Optional = true;
    f.oneofIndex = newIndex.get(f.oneofIndex);
  }
  m.oneofDecl = order.map((i) => m.oneofDecl[i]);
}
