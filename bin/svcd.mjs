#!/usr/bin/env node
// `npx svcd …`: runs the TypeScript entry point (no build step), from any directory, with tsx
// registered in this process (one process, so signals and exit codes are the star's own).
import { register } from 'tsx/esm/api';

register();
await import(new URL('../src/main.ts', import.meta.url).href);
