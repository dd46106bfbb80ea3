// The protocol leaf (src/protocol/) imports nothing outside itself: no other folder of src/, no
// package, no `node:` module. The client (src/client/) reaches into src/ only for the leaf. These are
// the arrows of DESIGN.md that the browser build and the coming client rely on; tsc cannot state
// them, so every file is parsed here and every module it names is checked.
//
// The one exception is the Node-only gRPC client (src/client/grpc/, `svcd/client/grpc`): it loads
// the svc.v1 schema through the server's loader and status codec and types its messages with the
// generated src/gen/. Those reaches are listed below by path, so no other one can creep in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { REPO_ROOT } from '../helpers/server.ts';

const SRC = join(REPO_ROOT, 'src');
const PROTOCOL = join(SRC, 'protocol');
const CLIENT = join(SRC, 'client');
const CLIENT_GRPC = join(CLIENT, 'grpc');

/** What src/client/grpc/ may reach outside the client and the leaf (paths under src/). */
const GRPC_CLIENT_REACHES: readonly string[] = ['api/grpc/proto.ts', 'api/grpc/rpc-status.ts'];
const GRPC_CLIENT_REACH_DIRS: readonly string[] = ['gen'];
/** Packages the gRPC client may import; the browser-safe rest of the client imports none. */
const GRPC_CLIENT_PACKAGES: readonly string[] = ['@grpc/grpc-js'];

/** Every module a TypeScript source names: import and export-from declarations (type-only too),
 *  `import x = require()`, dynamic import(), `import('…')` types, require() calls, and
 *  triple-slash references. */
function modulesNamedBy(fileName: string, text: string): string[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: string[] = [];
  const literal = (n: ts.Node | undefined): void => {
    if (n !== undefined && ts.isStringLiteralLike(n)) out.push(n.text);
  };
  const visit = (n: ts.Node): void => {
    if (ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) literal(n.moduleSpecifier);
    else if (ts.isImportEqualsDeclaration(n) && ts.isExternalModuleReference(n.moduleReference)) literal(n.moduleReference.expression);
    else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument)) literal(n.argument.literal);
    else if (ts.isCallExpression(n) && (n.expression.kind === ts.SyntaxKind.ImportKeyword
      || (ts.isIdentifier(n.expression) && n.expression.text === 'require'))) literal(n.arguments[0]);
    ts.forEachChild(n, visit);
  };
  visit(sf);
  for (const r of sf.referencedFiles) out.push(r.fileName);
  for (const r of sf.typeReferenceDirectives) out.push(r.fileName);
  return out;
}

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

const isRelative = (spec: string): boolean => spec.startsWith('./') || spec.startsWith('../');
const inside = (path: string, dir: string): boolean => path === dir || path.startsWith(dir + sep);
const show = (file: string, spec: string): string => `${relative(REPO_ROOT, file)} imports ${spec}`;

/** A triple-slash `path` reference is a file name; every other entry is a module specifier. */
function target(file: string, spec: string): string | undefined {
  return isRelative(spec) ? resolve(dirname(file), spec) : undefined;
}

function protocolViolations(file: string, specs: readonly string[]): string[] {
  return specs.filter((spec) => {
    const to = target(file, spec);
    return to === undefined || !inside(to, PROTOCOL);
  }).map((spec) => show(file, spec));
}

function clientViolations(file: string, specs: readonly string[]): string[] {
  const grpc = inside(file, CLIENT_GRPC);
  return specs.filter((spec) => {
    const to = target(file, spec);
    if (to === undefined) return !(grpc && GRPC_CLIENT_PACKAGES.includes(spec));
    if (inside(to, CLIENT) || inside(to, PROTOCOL)) return false;
    if (!grpc) return true;
    const fromSrc = relative(SRC, to).split(sep).join('/');
    return !(GRPC_CLIENT_REACHES.includes(fromSrc) || GRPC_CLIENT_REACH_DIRS.some((d) => fromSrc.startsWith(`${d}/`)));
  }).map((spec) => show(file, spec));
}

function check(dir: string, rule: (file: string, specs: readonly string[]) => string[]): { files: number; bad: string[] } {
  const files = sourcesUnder(dir);
  const bad = files.flatMap((f) => rule(f, modulesNamedBy(f, readFileSync(f, 'utf8'))));
  return { files: files.length, bad };
}

test('every way a source names a module is seen', () => {
  const text = [
    // Triple-slash directives count only above the first statement, as TypeScript reads them.
    '/// <reference types="node" />',
    '/// <reference path="../h.d.ts" />',
    "import a from './a.ts';",
    "import type { B } from '../core/b.ts';",
    "export * from 'node:fs';",
    "export { c } from '@pkg/c';",
    "import d = require('d');",
    "const e = await import('../api/e.ts');",
    "type F = import('../storage/f.ts').F;",
    "const g = require('g');",
  ].join('\n');
  assert.deepEqual(modulesNamedBy('x.ts', text).sort(),
    ['../api/e.ts', '../core/b.ts', '../h.d.ts', '../storage/f.ts', './a.ts', '@pkg/c', 'd', 'g', 'node', 'node:fs'].sort());
});

test('the rules refuse what leaves the leaf or the client', () => {
  const p = join(PROTOCOL, 'x.ts');
  assert.deepEqual(protocolViolations(p, ['./errors.ts', './sub/y.ts']), []);
  assert.equal(protocolViolations(p, ['../core/errors.ts', 'node:buffer', '@grpc/grpc-js', '../protocol-extra/z.ts']).length, 4);
  const c = join(CLIENT, 'http', 'x.ts');
  assert.deepEqual(clientViolations(c, ['../errors.ts', '../../protocol/rules.ts']), []);
  assert.equal(clientViolations(c, ['../../core/types.ts', '../../gen/svc/v1/Position.ts', '../../api/grpc/proto.ts', 'node:buffer', '@grpc/grpc-js']).length, 5);
  const g = join(CLIENT_GRPC, 'x.ts');
  assert.deepEqual(clientViolations(g, ['../../gen/svc/v1/Position.ts', '../../api/grpc/proto.ts', '@grpc/grpc-js', '../../protocol/records.ts']), []);
  assert.equal(clientViolations(g, ['../../api/grpc/convert.ts', '../../core/types.ts', 'node:fs']).length, 3);
});

test('src/protocol/ imports nothing outside src/protocol/ (no package, no node: module)', () => {
  const { files, bad } = check(PROTOCOL, protocolViolations);
  assert.ok(files >= 5, `found only ${files} files under src/protocol`);
  assert.deepEqual(bad, []);
});

test('src/client/ imports from src/ only src/client/ and src/protocol/ (the gRPC client: also its schema)', () => {
  const { files, bad } = check(CLIENT, clientViolations);
  assert.ok(files >= 10, `found only ${files} files under src/client`);
  assert.deepEqual(bad, []);
});
