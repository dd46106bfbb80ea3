#!/usr/bin/env node
// `npx svcd …`: runs the TypeScript entry point through tsx (no build step), from any directory.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const tsx = import.meta.resolve('tsx'); // resolved from this package, not the caller's directory
const r = spawnSync(process.execPath, ['--import', tsx, main, ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(r.status ?? 1);
