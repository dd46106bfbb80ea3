// The batching producer's knobs, as flags: one list and one reading of them for `svc append` and
// `svc bench`, which both drive the client's producer.

import type { ProducerOptions } from '../../client/producer.ts';
import { UsageError, type Args, type FlagSpec } from './args.ts';

export const PRODUCER_FLAGS: readonly FlagSpec[] = [
  { name: 'linger-ms', value: 'MS', help: 'how long a batch waits for more records (default 5)' },
  { name: 'batch-records-max', value: 'N', help: 'records per batch (default 1000)' },
  { name: 'batch-bytes-max', value: 'BYTES', help: 'content bytes per batch (default 1 MiB)' },
  { name: 'inflight-batches-max', value: 'N', help: 'batches in flight at once (default 8; 1 over HTTP without --match-seq-num)' },
  { name: 'buffer-bytes-max', value: 'BYTES', help: 'backpressure bound (default 32 MiB); smaller shows ack latency without queueing' },
];

/** The producer options the flags set (absent ones keep the client's defaults). */
export function producerOptionsOf(args: Args): Pick<ProducerOptions, 'lingerMs' | 'batchRecordsMax' | 'batchBytesMax' | 'inflightBatchesMax' | 'bufferBytesMax'> {
  const out: Pick<ProducerOptions, 'lingerMs' | 'batchRecordsMax' | 'batchBytesMax' | 'inflightBatchesMax' | 'bufferBytesMax'> = {};
  const set = (flag: string, key: keyof typeof out): void => {
    const v = args.int(flag);
    if (v === undefined) return;
    // Checked here, so a bad value is a usage error with nothing sent (the producer would throw).
    if (v < (key === 'lingerMs' ? 0 : 1)) throw new UsageError(`--${flag} must be ${key === 'lingerMs' ? 'at least 0' : 'at least 1'}, got ${v}`);
    out[key] = v;
  };
  set('linger-ms', 'lingerMs');
  set('batch-records-max', 'batchRecordsMax');
  set('batch-bytes-max', 'batchBytesMax');
  set('inflight-batches-max', 'inflightBatchesMax');
  set('buffer-bytes-max', 'bufferBytesMax');
  return out;
}
