// The public Durable Streams conformance suite, unchanged, against the star whose DS base URL the
// runner (conformance.test.ts) passes in DS_BASE_URL.
import { runConformanceTests } from '@durable-streams/server-conformance-tests';

const baseUrl = process.env.DS_BASE_URL;
if (!baseUrl) throw new Error('DS_BASE_URL is required (run through test/ds/conformance.test.ts)');
runConformanceTests({ baseUrl });
