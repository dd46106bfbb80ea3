// vitest runs only the DS conformance suite (the rest of the tests are node:test).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/ds/*.vitest.ts'],
    root: new URL('../..', import.meta.url).pathname,
    reporters: ['default'],
  },
});
