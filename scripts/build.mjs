// Builds the main thread's code into one ES module (src/main.bundle.mjs) for `npm start` and the
// benches: the same sources, without tsx's per-function wrappers and loader hooks, about 10 % more
// appends/s on the event loop (bench/README.md). Worker threads still load their TypeScript through
// tsx (src/workers/boot.mjs, src/storage/wal/flusher-boot.mjs). The bundle sits in src/ so the
// worker entry URLs, resolved against src/server.ts, resolve the same from it.
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
await build({
  entryPoints: [`${root}src/main.ts`],
  outfile: `${root}src/main.bundle.mjs`,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  packages: 'external',
  sourcemap: 'linked',
  logLevel: 'warning',
});
