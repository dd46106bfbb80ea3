// Long fuzz runs from the command line (the bounded run is test/fuzz/http.test.ts):
//   npx tsx test/fuzz/run.ts --runs 20000 --seed 42 --engine uws
// Starts a real star per engine, prints the seed first, and on a failure prints fast-check's report
// (the counterexample, its seed and path) and the command that replays it; exits 1.
import { parseArgs } from 'node:util';
import { ENGINES, startServer, type Engine } from '../helpers/server.ts';
import { stopServer } from '../conformance/client.ts';
import { fuzzStar } from './http-fuzz.ts';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5000' },
    seed: { type: 'string' },
    engine: { type: 'string', default: 'both' },
    path: { type: 'string' },
  },
});
const runs = Number(values.runs);
const seed = values.seed !== undefined ? Number(values.seed) : Date.now() % 2 ** 31;
const engines: readonly Engine[] = values.engine === 'both' ? ENGINES : [values.engine as Engine];
if (!Number.isSafeInteger(runs) || runs <= 0 || !Number.isSafeInteger(seed) || engines.some((e) => !ENGINES.includes(e))) {
  console.error('usage: npx tsx test/fuzz/run.ts [--runs N] [--seed S] [--engine uws|node|both] [--path P]');
  process.exit(2);
}

let failed = false;
for (const engine of engines) {
  console.log(`fuzz: engine ${engine}, ${runs} runs, seed ${seed}`);
  const srv = await startServer({ engine });
  const t0 = Date.now();
  try {
    await fuzzStar(srv.baseUrl, { runs, seed, ...(values.path ? { path: values.path } : {}) });
    if (/bug: unmapped error/.test(srv.output())) throw new Error(`the star logged a bug:\n${srv.output()}`);
    console.log(`fuzz: engine ${engine} passed ${runs} runs in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } catch (err) {
    failed = true;
    console.error(`fuzz: engine ${engine} FAILED (replay: npx tsx test/fuzz/run.ts --engine ${engine} --seed ${seed} --runs ${runs})`);
    console.error((err as Error).message);
  } finally {
    await stopServer(srv).catch((err: unknown) => { failed = true; console.error(String(err)); });
  }
}
process.exit(failed ? 1 : 0);
