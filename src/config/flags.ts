// One flag framework for every command (svcd, `svcd gateway`, `svcd credentials`, `svc`): a spec type,
// one parser for argv plus the environment, the typed readers of a value, and the --help table. Each
// command keeps its own list of specs and what it builds from them; the rules below are the same for
// all of them, so a flag behaves alike whichever command it is given to.
//
// The rules:
// - `--name value` and `--name=value`; a boolean is `--name`, `--name=true|false` or `--name true|false`
//   (the next word is taken only when it is literally true or false, so a switch never swallows an
//   argument); `-x` is the spec's one-letter alias.
// - A value is the next word whatever it looks like (a fencing token may start with a dash); only the
//   end of argv is a missing value.
// - A flag given twice: the last wins (wrappers and test harnesses put defaults first and let the caller
//   override), unless its spec says `repeat: 'all'` (every value kept, in order) or `repeat: 'once'`
//   (refused: a second --key-id on a destructive command is more likely a slip than an override).
// - A flag beats its variable, a variable beats the default; an empty variable counts as unset
//   (`${VAR}` in a compose file or unit expands to '' when VAR is missing).
// - An unknown flag, a missing value, a bad value, a stray argument: one FlagError naming the flag.
//
// No node: imports: the module is pure, so its rules are testable without a process.

import { TIMER_DELAY_MS_MAX } from './limits.ts';

/** What a command accepts. The shape (name, env, help, default, boolean) is the svcd FLAGS table's. */
export interface FlagSpec {
  /** Without dashes. '' for a setting read from its variable only (envOnly). */
  name: string;
  /** The variable standing in for the flag ('' or absent: none). */
  env?: string;
  help: string;
  /** Shown in --help and answered when neither the flag nor its variable is set. */
  default?: string;
  /** A switch: `--name` alone means true. */
  boolean?: boolean;
  /** Secrets are read from the environment only (never from argv, which `ps` shows). */
  envOnly?: boolean;
  /** One-letter alias (`-f`). */
  short?: string;
  /** The value's placeholder in --help (`URL`, `N`); VALUE when absent. */
  value?: string;
  /** A flag given more than once: 'last' (default) wins, 'all' keeps every value, 'once' refuses. */
  repeat?: 'last' | 'all' | 'once';
}

/** A refused command line or variable: one line naming the flag. Each command catches this one type. */
export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

export interface ParseOptions {
  /** Words that are not flags are collected (and `--` ends the flags); otherwise each is refused. */
  positionals?: boolean;
}

type Env = Readonly<Record<string, string | undefined>>;

const BOOLEAN_WORD = /^(true|false)$/;

/** The parsed command line with its environment: answers a flag by name, by the precedence rules. */
export class Flags {
  constructor(
    private readonly specs: ReadonlyMap<string, FlagSpec>,
    private readonly values: ReadonlyMap<string, readonly string[]>,
    readonly positionals: readonly string[],
    private readonly env: Env,
  ) {}

  /** Whether the flag was given on the command line (its variable does not count). */
  has(name: string): boolean {
    return this.values.has(name);
  }

  /** The names given on the command line, in the order first seen. */
  given(): string[] {
    return [...this.values.keys()];
  }

  /** The command-line value only (the last one): for readers, such as auth, with their own fallbacks. */
  argv(name: string): string | undefined {
    return this.values.get(name)?.at(-1);
  }

  /** Every command-line value of a repeatable flag, else its variable or default as one value. */
  all(name: string): string[] {
    const given = this.values.get(name);
    if (given) return [...given];
    const v = this.fallback(name);
    return v === undefined ? [] : [v];
  }

  /** The flag, else its variable, else its default, else undefined. */
  str(name: string): string | undefined {
    return this.argv(name) ?? this.fallback(name);
  }

  bool(name: string): boolean {
    const v = this.str(name);
    return v === undefined ? false : boolValue(v, name);
  }

  /** A non-negative integer, or `dflt` when unset. */
  int(name: string, dflt?: number): number | undefined {
    const v = this.str(name);
    return v === undefined ? dflt : nonNegativeInt(v, name);
  }

  private fallback(name: string): string | undefined {
    // A name the command did not declare cannot have been given, so it is simply unset.
    const spec = this.specs.get(name);
    const fromEnv = spec?.env ? this.env[spec.env] : undefined;
    return fromEnv !== undefined && fromEnv !== '' ? fromEnv : spec?.default;
  }
}

/** Parses argv against the specs; reads variables from env. Throws FlagError. */
export function parseFlags(argv: readonly string[], specs: readonly FlagSpec[], env: Env, options: ParseOptions = {}): Flags {
  const byName = new Map<string, FlagSpec>();
  const byShort = new Map<string, FlagSpec>();
  for (const s of specs) {
    if (s.name === '') continue; // env-only settings have no flag to match
    byName.set(s.name, s);
    if (s.short) byShort.set(s.short, s);
  }
  const values = new Map<string, string[]>();
  const positionals: string[] = [];
  let onlyPositionals = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const isFlag = !onlyPositionals && arg.startsWith('-') && arg !== '-';
    if (!isFlag) {
      if (!options.positionals) throw new FlagError(`unexpected argument ${arg}`);
      positionals.push(arg);
      continue;
    }
    if (arg === '--' && options.positionals) { onlyPositionals = true; continue; }
    let spec: FlagSpec | undefined;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      if (eq >= 0) inline = arg.slice(eq + 1);
      spec = byName.get(name);
      if (!spec) throw new FlagError(`unknown flag --${name} (see --help)`);
    } else {
      spec = byShort.get(arg.slice(1));
      if (!spec) throw new FlagError(`unknown flag ${arg} (see --help)`);
    }
    if (spec.envOnly) throw new FlagError(`--${spec.name} is read from ${spec.env} only`);
    let v: string;
    if (inline !== undefined) v = inline;
    else if (spec.boolean) v = i + 1 < argv.length && BOOLEAN_WORD.test(argv[i + 1]) ? argv[++i] : 'true';
    else {
      if (i + 1 >= argv.length) throw new FlagError(`--${spec.name} needs a value${spec.value ? ` (${spec.value})` : ''}`);
      v = argv[++i];
    }
    // A bad boolean is refused where it is typed, not at first use.
    if (spec.boolean) boolValue(v, spec.name);
    const seen = values.get(spec.name);
    if (seen === undefined) values.set(spec.name, [v]);
    else if (spec.repeat === 'once') throw new FlagError(`--${spec.name} given twice`);
    else if (spec.repeat === 'all') seen.push(v);
    else seen.splice(0, seen.length, v);
  }
  return new Flags(byName, values, positionals, env);
}

// The readers of one value. Each names the flag in its refusal, so a bad variable is reported by the
// flag it stands for (the help lists both).

export function boolValue(v: string, flag: string): boolean {
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new FlagError(`--${flag} must be true or false, got ${JSON.stringify(v)}`);
}

/** Decimal digits only: `1e3`, `0x10` and ` 5` are typos more often than intent. */
export function nonNegativeInt(v: string, flag: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n)) throw new FlagError(`--${flag} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return n;
}

export function positiveInt(v: string, flag: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n <= 0) throw new FlagError(`--${flag} must be a positive integer, got ${JSON.stringify(v)}`);
  return n;
}

/** A positive number of milliseconds a timer can wait: at most TIMER_DELAY_MS_MAX (about 24.8 days). */
export function timerMs(v: string, flag: string): number {
  const n = positiveInt(v, flag);
  if (n > TIMER_DELAY_MS_MAX) throw new FlagError(`--${flag} must be at most ${TIMER_DELAY_MS_MAX} ms, got ${v}`);
  return n;
}

const DURATION_UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A positive duration: `250ms`, `30s`, `5m`, `1h`, or a bare number of milliseconds. */
export function durationMs(v: string, flag: string, zeroMeans?: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v.trim());
  const n = m ? Math.round(Number(m[1]) * DURATION_UNIT_MS[m[2] ?? 'ms']) : NaN;
  if (n === 0 && zeroMeans !== undefined) return 0;
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new FlagError(`--${flag} must be a positive duration such as 5m, 300s or 300000ms${zeroMeans !== undefined ? ` (or 0: ${zeroMeans})` : ''}`);
  }
  return n;
}

/** `host:port`, `:port` (every interface) or `port` (loopback); '' is none (the listener is off). */
export function hostPort(v: string, flag: string): { host: string; port: number } | undefined {
  if (v === '') return undefined;
  const i = v.lastIndexOf(':');
  const host = i < 0 ? '127.0.0.1' : v.slice(0, i).replace(/^\[|\]$/g, '') || '0.0.0.0';
  const portText = i < 0 ? v : v.slice(i + 1);
  // Decimal digits only: an empty port (a random one) or 0x1f90 is a typo, not a choice.
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new FlagError(`--${flag}: bad address ${v} (host:port, the port in decimal; 0 picks a free one)`);
  return { host, port };
}

/** `host:port` as dialers and URLs write it: an IPv6 literal in brackets (`[::1]:7070`). */
export function hostPortText(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A comma-separated list, trimmed, empty entries dropped. */
export function listValue(v: string): string[] {
  return v.split(',').map((e) => e.trim()).filter((e) => e !== '');
}

/** The flag table of a --help: each flag with its placeholder, help, default and variable. */
export function flagsHelp(specs: readonly FlagSpec[]): string {
  const rows = specs.map((s) => {
    const def = s.default !== undefined && s.default !== '' ? ` (default ${s.default})` : '';
    // An env-only setting has no flag to show: its variable takes the flag's column.
    if (s.envOnly) return [s.env ?? '', `${s.help}${def} (environment only)`] as const;
    const left = `${s.short ? `-${s.short}, ` : ''}--${s.name}${s.boolean ? '' : ` ${s.value ?? 'VALUE'}`}`;
    return [left, `${s.help}${def}${s.env ? ` [${s.env}]` : ''}`] as const;
  });
  const width = Math.max(0, ...rows.map(([l]) => l.length)) + 2;
  return rows.map(([l, r]) => `  ${l.padEnd(width)}${r}`).join('\n');
}

/** A whole --help for a command whose flags all have variables: usage line, the precedence, the table. */
export function usageText(usage: string, specs: readonly FlagSpec[]): string {
  return [usage, '', 'Every flag can also be set by its environment variable; the flag wins.', '', flagsHelp(specs)].join('\n');
}
