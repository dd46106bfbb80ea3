#!/usr/bin/env node
// Generates TypeScript types for proto/svc/v1/*.proto with proto-loader-gen-types.
//
//   node scripts/gen-proto.mjs            → src/gen (replaced whole)
//   node scripts/gen-proto.mjs <outDir>   → <outDir> (test/grpc/proto-fresh.test.ts uses a temp dir)
//
// The options must match the runtime loader (src/api/grpc/proto.ts, LOADER_OPTIONS): keepCase,
// longs Number, enums String, defaults, oneofs. Imports carry `.ts` so the output type-checks under
// NodeNext resolution with allowImportingTsExtensions.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const protoRoot = join(root, 'proto');
const outDir = resolve(process.argv[2] ?? join(root, 'src', 'gen'));

const require = createRequire(import.meta.url);
const loaderPkg = dirname(require.resolve('@grpc/proto-loader/package.json'));
const bin = join(loaderPkg, 'build', 'bin', 'proto-loader-gen-types.js');

const files = readdirSync(join(protoRoot, 'svc', 'v1'))
  .filter((f) => f.endsWith('.proto'))
  .sort()
  .map((f) => `svc/v1/${f}`);

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
execFileSync(process.execPath, [
  bin,
  '--grpcLib=@grpc/grpc-js',
  `--outDir=${outDir}`,
  '--longs=Number',
  '--enums=String',
  '--defaults',
  '--oneofs',
  '--keepCase',
  '--includeComments',
  '--importFileExtension=.ts',
  ...files,
  // Last: yargs reads an array option greedily, so it must not precede the file names.
  `--includeDirs=${protoRoot}`,
], { cwd: protoRoot, stdio: ['ignore', 'inherit', 'inherit'] });

// The generator stamps each file with the proto's absolute path; make it repo-relative so the output
// does not depend on where the repository is checked out.
const prefix = `${protoRoot}/`;
for (const entry of readdirSync(outDir, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
  const file = join(entry.parentPath ?? entry.path, entry.name);
  const text = readFileSync(file, 'utf8');
  const fixed = text.split(prefix).join('proto/');
  if (fixed !== text) writeFileSync(file, fixed);
}
