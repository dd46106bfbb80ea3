// The Durable Streams reference server (@durable-streams/server, file-backed: a log file per stream,
// LMDB for metadata, fdatasync on every append) as a bench child on 127.0.0.1, an OS-chosen port and
// the data dir in DS_REF_DATA_DIR. It reports its base URL over IPC and stops on SIGTERM. Its own
// log lines (a "store.append slow" line per append over 50 ms) go to stderr, so the bench's stdout
// holds only the tables.
import { DurableStreamTestServer } from '@durable-streams/server';
import { toParent } from '../lib/child.ts';

const toStderr = (...args: unknown[]): void => { process.stderr.write(`[ds-reference] ${args.map(String).join(' ')}\n`); };
console.info = toStderr;
console.log = toStderr;
console.warn = toStderr;

const dataDir = process.env.DS_REF_DATA_DIR;
if (!dataDir) throw new Error('DS_REF_DATA_DIR is required');
const server = new DurableStreamTestServer({ host: '127.0.0.1', port: 0, dataDir });
const url = await server.start();
toParent({ type: 'listening', url });

let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  server.stop().then(() => process.exit(0), () => process.exit(1));
});
