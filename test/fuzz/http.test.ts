// The HTTP fuzzer (test/fuzz/http-fuzz.ts) in `npm test`: a bounded number of generated requests per
// engine against a real star, with the seed printed so a failure replays:
//   SVCD_FUZZ_SEED=<seed> node --import tsx --test test/fuzz/http.test.ts
// or longer runs: npx tsx test/fuzz/run.ts --runs 20000 --seed <seed> [--engine uws|node].
import { test } from 'node:test';
import { ENGINES, startServer } from '../helpers/server.ts';
import { stopServer } from '../conformance/client.ts';
import { fuzzStar } from './http-fuzz.ts';
import assert from 'node:assert/strict';

/** Requests per engine in `npm test`: every route several times over, a few seconds per engine. */
const RUNS_PER_ENGINE = Number(process.env.SVCD_FUZZ_RUNS ?? 1500);

for (const engine of ENGINES) {
  test(`fuzzed requests over every route: envelopes, exact read-backs, no 5xx, no hang (${engine})`, { timeout: 120_000 }, async (t) => {
    const seed = Number(process.env.SVCD_FUZZ_SEED ?? Date.now() % 2 ** 31);
    t.diagnostic(`seed ${seed} (replay: SVCD_FUZZ_SEED=${seed}, or npx tsx test/fuzz/run.ts --engine ${engine} --seed ${seed} --runs ${RUNS_PER_ENGINE})`);
    const srv = await startServer({ engine });
    try {
      await fuzzStar(srv.baseUrl, { runs: RUNS_PER_ENGINE, seed });
      assert.doesNotMatch(srv.output(), /bug: unmapped error/, 'no request reached the 500 path');
    } finally {
      await stopServer(srv);
    }
  });
}
