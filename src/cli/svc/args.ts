// The command line's grammar: `svc <command> [subcommand] [positionals] [--flag value | --flag=value |
// --switch | -x]`, by the flag framework's rules (src/config/flags.ts), which svcd and the Gateway share.
// Each command declares its flags; an unknown flag, a missing value or a bad number is a usage error
// (exit code 2). Global flags (--url, --token, --grpc, --json, --help) are accepted anywhere.

import { FlagError, flagsHelp, parseFlags, type FlagSpec, type Flags } from '../../config/flags.ts';

export { flagsHelp, type FlagSpec };

/** A usage error of svc's own (bad address, missing argument); the parser's FlagError is its parent, so
 *  one `instanceof FlagError` catches both. */
export class UsageError extends FlagError {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const GLOBAL_FLAGS: readonly FlagSpec[] = [
  { name: 'url', value: 'URL', env: 'SVC_URL', help: 'the data bridge or Gateway (default http://127.0.0.1:7070)' },
  { name: 'token', value: 'JWT', env: 'SVC_TOKEN', help: 'bearer token (jwt auth); see `svc token`' },
  { name: 'grpc', value: 'HOST:PORT', env: 'SVC_GRPC', help: 'the gRPC listener (credentials, --transport grpc)' },
  { name: 'json', boolean: true, help: 'machine-readable output: JSON (one object per line for lists and records)' },
  { name: 'help', short: 'h', boolean: true, help: 'show help' },
];

/** Parses argv against the command's flags plus the global ones; reads their variables from env. */
export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[], env: NodeJS.ProcessEnv): Flags {
  return parseFlags(argv, [...specs, ...GLOBAL_FLAGS], env, { positionals: true });
}

export class Args {
  constructor(private readonly flags: Flags) {}

  get positionals(): readonly string[] {
    return this.flags.positionals;
  }

  /** Given on the command line (a variable does not count). */
  has(name: string): boolean {
    return this.flags.has(name);
  }

  /** A flag's value, else its environment variable, else undefined. */
  str(name: string): string | undefined {
    return this.flags.str(name);
  }

  bool(name: string): boolean {
    return this.flags.bool(name);
  }

  /** A non-negative integer flag. */
  int(name: string, dflt?: number): number | undefined {
    return this.flags.int(name, dflt);
  }

  /** Exactly `n` positionals (or between min and max). */
  expect(min: number, max: number, what: string): readonly string[] {
    const p = this.flags.positionals;
    if (p.length < min || p.length > max) throw new UsageError(`expected ${what}`);
    return p;
  }
}
