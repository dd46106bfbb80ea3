#!/usr/bin/env node
// `npx svc …`: the svcd command-line client, run from its TypeScript sources through tsx (no build
// step), from any directory, as bin/svcd.mjs runs the star.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const main = fileURLToPath(new URL('../src/cli/svc/main.ts', import.meta.url));
const tsx = import.meta.resolve('tsx'); // resolved from this package, not the caller's directory
const r = spawnSync(process.execPath, ['--import', tsx, main, ...process.argv.slice(2)], { stdio: 'inherit' });
// A child ended by a signal (SIGINT on ^C) exits as a shell reports it: 128 + the signal's number.
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGPIPE: 141 };
process.exit(r.status ?? SIGNAL_EXIT[r.signal] ?? 1);
