// vitest runs only the DS conformance suite (the rest of the tests are node:test). Its tests mostly
// wait (TTL expiries, long-polls), each on streams of its own, so they run concurrently, eight at a
// time; each gets 30 s instead of vitest's 5 s, since on a loaded CI machine a property-based test
// that makes hundreds of requests ran past 5 s with the others beside it. A failed test is run once
// more: some of the suite's own helpers give up after fixed times we cannot change (fetchSSE waits
// 2 s for an event stream's head, then reports an empty 200 with no Content-Type), and CI runs three
// test files beside this one on two cores. A test that fails twice still fails the run.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/ds/*.vitest.ts'],
    root: new URL('../..', import.meta.url).pathname,
    reporters: ['default'],
    sequence: { concurrent: true },
    maxConcurrency: 8,
    testTimeout: 30_000,
    retry: 1,
  },
});
