// Test-only worker bootstrap: Node 20 ignores `--import tsx` in a Worker's execArgv for .ts entry
// points, so register tsx's loader here, then import the real worker module named in workerData.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.tsWorkerEntry);
