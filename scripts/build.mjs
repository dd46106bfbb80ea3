// Builds the star's code into ES modules beside its sources, for `npm start`, the tests and the
// benches: src/main.bundle.mjs (the main thread), src/tasks.bundle.mjs (the piscina workers' tasks),
// src/flusher.bundle.mjs (the WAL flusher thread) and src/svc.bundle.mjs (the `svc` CLI). The same
// sources, without tsx's per-function wrappers and loader hooks: about 10 % more appends/s on the event loop (bench/README.md), and a
// worker thread that starts in milliseconds instead of compiling its TypeScript first (about 0.3 s
// for the flusher). The bundles sit in src/ so the worker URLs the main resolves against its own
// location (src/server.ts) and the paths the sources find from theirs (proto/, the dashboard,
// node_modules) resolve the same from them. Run from the sources (bin/svcd.mjs), the star starts its
// workers from the tsx entries (src/workers/boot.mjs, src/storage/wal/flusher-boot.mjs) instead.
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const common = {
  outdir: `${root}src`,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
};
await build({
  ...common,
  entryPoints: {
    'main.bundle': `${root}src/main.ts`,
    'tasks.bundle': `${root}src/workers/tasks.ts`,
    'flusher.bundle': `${root}src/storage/wal/flusher-worker.ts`,
  },
});
// The `svc` client CLI, for the tests that run it many times (bin/svc.mjs runs the sources). Split,
// so what its commands load on first use (the gRPC client with @grpc/grpc-js and the schema, `svc
// bench`'s histograms) stays out of every other command's start: about half of a command's 0.35 s.
for (const f of readdirSync(`${root}src`)) if (f.startsWith('svc.chunk-')) rmSync(`${root}src/${f}`);
await build({
  ...common,
  entryPoints: { 'svc.bundle': `${root}src/cli/svc/main.ts` },
  splitting: true,
  chunkNames: 'svc.chunk-[hash]',
});
