// A tiny entry point so tests can run `svcd credentials …` in a child process exactly as main.ts
// will dispatch it: argv after the word `credentials`, the exit code from runCredentialsCli.
import { runCredentialsCli } from '../../src/cli/credentials.ts';

process.exitCode = await runCredentialsCli(process.argv.slice(2));
