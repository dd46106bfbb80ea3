// s3rver in a bench child of its own: a bench that runs a cluster star next to its load generator
// must not share the generator's event loop with s3rver, whose deletes do synchronous directory work
// that grows with the objects held (a DeleteObjects of 1,000 keys among 10,000 objects took 19.5 s).
// Answers { type: 'listening', endpoint, bucket, env }; stops on SIGTERM.
import { startS3 } from '../../test/helpers/s3.ts';
import { toParent } from '../lib/child.ts';

const s3 = await startS3(process.env.BENCH_S3_BUCKET ?? 'svcd-bench');
toParent({ type: 'listening', endpoint: s3.endpoint, bucket: s3.bucket, env: s3.env });
process.on('SIGTERM', () => { void s3.close().finally(() => process.exit(0)); });
