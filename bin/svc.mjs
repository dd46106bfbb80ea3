#!/usr/bin/env node
// `npx svc …`: the svcd command-line client, run from its TypeScript sources (no build step), from any
// directory, as bin/svcd.mjs runs the star. tsx is registered in this process rather than in a child
// node: one process start per command instead of two (about 40 % of a short command's time).
import { register } from 'tsx/esm/api';

register();
const { runCommandLine } = await import(new URL('../src/cli/svc/main.ts', import.meta.url).href);
await runCommandLine();
