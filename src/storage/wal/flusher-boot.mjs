// Worker entry for the flusher: registers the TypeScript loader in this thread, then runs the
// flusher (worker threads do not reliably inherit --import hooks on Node 20).
import { register } from 'tsx/esm/api';

register();
await import('./flusher-worker.ts');
