// svcd under --cpu-prof: the tests' one star harness (test/helpers/server.ts) with Node's profiling
// flags ahead of the entry (Node refuses --cpu-prof in NODE_OPTIONS).
import { startServer, tempDir, type RunningServer } from '../../test/helpers/server.ts';

export function startProfiledServer(profileDir: string, args: string[] = []): Promise<RunningServer> {
  return startServer({ dataDir: tempDir('svcd-bench-prof-'), nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`], args });
}
