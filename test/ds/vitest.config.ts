// vitest runs only the DS conformance suite (the rest of the tests are node:test). Its tests mostly
// wait (TTL expiries, long-polls), each on streams of its own, so they run concurrently.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/ds/*.vitest.ts'],
    root: new URL('../..', import.meta.url).pathname,
    reporters: ['default'],
    sequence: { concurrent: true },
    maxConcurrency: 16,
  },
});
