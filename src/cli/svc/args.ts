// The command line's grammar: `svc <command> [subcommand] [positionals] [--flag value | --flag=value |
// --switch | -x]`. Each command declares its flags; an unknown flag, a missing value or a bad number is
// a UsageError (exit code 2). Global flags (--url, --token, --grpc, --json, --help) are accepted
// anywhere.

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface FlagSpec {
  name: string;
  /** One-letter alias (`-f`). */
  short?: string;
  /** Takes a value (else a switch). */
  value?: string;
  help: string;
  /** Environment variable supplying the default. */
  env?: string;
}

export const GLOBAL_FLAGS: readonly FlagSpec[] = [
  { name: 'url', value: 'URL', env: 'SVC_URL', help: 'the data bridge or Gateway (default http://127.0.0.1:7070)' },
  { name: 'token', value: 'JWT', env: 'SVC_TOKEN', help: 'bearer token (jwt auth); see `svc token`' },
  { name: 'grpc', value: 'HOST:PORT', env: 'SVC_GRPC', help: 'the gRPC listener (credentials, --transport grpc)' },
  { name: 'json', help: 'machine-readable output: JSON (one object per line for lists and records)' },
  { name: 'help', short: 'h', help: 'show help' },
];

export interface Parsed {
  positionals: string[];
  flags: Map<string, string | true>;
}

/** Parses argv against the command's flags plus the global ones. */
export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[]): Parsed {
  const all = [...specs, ...GLOBAL_FLAGS];
  const byName = new Map(all.map((s) => [s.name, s]));
  const byShort = new Map(all.filter((s) => s.short).map((s) => [s.short!, s]));
  const out: Parsed = { positionals: [], flags: new Map() };
  let onlyPositionals = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (onlyPositionals || arg === '-' || !arg.startsWith('-')) { out.positionals.push(arg); continue; }
    if (arg === '--') { onlyPositionals = true; continue; }
    let spec: FlagSpec | undefined;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      if (eq >= 0) inline = arg.slice(eq + 1);
      spec = byName.get(name);
      if (!spec) throw new UsageError(`unknown flag --${name}`);
    } else {
      spec = byShort.get(arg.slice(1));
      if (!spec) throw new UsageError(`unknown flag ${arg}`);
    }
    if (spec.value) {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new UsageError(`--${spec.name} needs a value (${spec.value})`);
      out.flags.set(spec.name, v);
    } else {
      if (inline !== undefined) throw new UsageError(`--${spec.name} takes no value`);
      out.flags.set(spec.name, true);
    }
  }
  return out;
}

export class Args {
  constructor(private readonly parsed: Parsed, private readonly env: NodeJS.ProcessEnv, private readonly specs: readonly FlagSpec[]) {}

  get positionals(): readonly string[] {
    return this.parsed.positionals;
  }

  has(name: string): boolean {
    return this.parsed.flags.has(name);
  }

  /** A flag's value, else its environment variable, else undefined. */
  str(name: string): string | undefined {
    const v = this.parsed.flags.get(name);
    if (typeof v === 'string') return v;
    const spec = [...this.specs, ...GLOBAL_FLAGS].find((s) => s.name === name);
    const fromEnv = spec?.env ? this.env[spec.env] : undefined;
    return fromEnv === '' ? undefined : fromEnv;
  }

  bool(name: string): boolean {
    return this.parsed.flags.get(name) === true;
  }

  /** A non-negative integer flag. */
  int(name: string, dflt?: number): number | undefined {
    const v = this.str(name);
    if (v === undefined) return dflt;
    if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) throw new UsageError(`--${name} must be a non-negative integer, got ${JSON.stringify(v)}`);
    return Number(v);
  }

  /** Exactly `n` positionals (or between min and max). */
  expect(min: number, max: number, what: string): readonly string[] {
    const p = this.parsed.positionals;
    if (p.length < min || p.length > max) throw new UsageError(`expected ${what}`);
    return p;
  }
}

/** The flag table of a help text. */
export function flagsHelp(specs: readonly FlagSpec[]): string {
  const rows = specs.map((s) => {
    const left = `${s.short ? `-${s.short}, ` : ''}--${s.name}${s.value ? ` ${s.value}` : ''}`;
    return [left, `${s.help}${s.env ? ` [${s.env}]` : ''}`] as const;
  });
  const width = Math.max(0, ...rows.map(([l]) => l.length)) + 2;
  return rows.map(([l, r]) => `  ${l.padEnd(width)}${r}`).join('\n');
}
