// `svcd credentials create|list|revoke`: the api-key registry from the command line, on a star's
// local data dir. It opens the same metadata store the star opens and goes through the same
// CredentialRegistry, so rows it writes are exactly the rows the star's exchange checks.
//
// It runs only while the star is stopped: it takes the data dir's lock, so it refuses while a star
// holds it (on a running star, use the gRPC admin plane, whose revocation is immediate).

import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FLAGS, metadataConfigFromEnv, type MetadataConfig } from '../config/config.ts';
import { FlagError, flagsHelp, parseFlags, type FlagSpec, type Flags } from '../config/flags.ts';
import { ServiceError } from '../core/errors.ts';
import { CredentialRegistry } from '../auth/credentials.ts';
import { openMetadataStore } from '../storage/metadata/open-store.ts';
import { credentialStoreOf } from '../credential-store.ts';
import { lockDataDir } from '../storage/data-dir-lock.ts';


/** The metadata backend's settings: svcd's own, read here from the environment only. */
const METADATA_ENV = new Set(['metadata', 'postgres-url', 'postgres-schema']);

// Each flag at most once: `revoke --key-id A --key-id B` is a slip, and revoking B would be a surprise.
export const CREDENTIALS_FLAGS: readonly FlagSpec[] = [
  { name: 'data-dir', env: 'SVCD_DATA_DIR', value: 'DIR', help: 'the star\'s data dir', repeat: 'once' },
  { name: 'scope', value: 'SCOPE', help: 'create: the credential\'s scope', repeat: 'once' },
  { name: 'key-id', value: 'KEY_ID', help: 'create: the id to register; revoke: the id to revoke', repeat: 'once' },
  { name: 'help', short: 'h', boolean: true, help: 'print this help and exit' },
  ...FLAGS.filter((f) => METADATA_ENV.has(f.name)).map((f) => ({ ...f, name: '', envOnly: true })),
];

export const CREDENTIALS_USAGE = [
  'usage: svcd credentials <command> --data-dir DIR [options]',
  '',
  '  create --scope SCOPE [--key-id KEY_ID]',
  '                           create an active credential; prints {key_id, secret, ...} once (JSON).',
  '                           KEY_ID: 1-128 of A-Z a-z 0-9 _ . - (default: generated ck_ + 16 hex)',
  '  list                     one JSON row per credential, never the secret or its hash',
  '  revoke --key-id KEY_ID   mark a credential revoked (idempotent)',
  '',
  'Flags and variables (a flag beats its variable):',
  flagsHelp(CREDENTIALS_FLAGS),
  '',
  'The metadata backend is the star\'s, read from the environment.',
  '',
  'Run with the star stopped: a running star picks up changes made here only at its next start.',
].join('\n');

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

const STDIO: CliIo = {
  out: (line) => { process.stdout.write(`${line}\n`); },
  err: (line) => { process.stderr.write(`${line}\n`); },
};

const COMMANDS = ['create', 'list', 'revoke'] as const;
type Command = (typeof COMMANDS)[number];

class UsageError extends Error {}

interface Parsed {
  command: Command | 'help';
  flags: Flags;
}

function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv): Parsed {
  const flags = parseFlags(argv, CREDENTIALS_FLAGS, env, { positionals: true });
  const words = flags.positionals;
  if (flags.bool('help') || words.includes('help')) return { command: 'help', flags };
  if (words.length === 0) throw new UsageError('missing command: create, list or revoke');
  if (!(COMMANDS as readonly string[]).includes(words[0])) throw new UsageError(`unknown command '${words[0]}'`);
  if (words.length > 1) throw new UsageError(`unexpected argument '${words[1]}'`);
  return { command: words[0] as Command, flags };
}

/** The registry over a star's metadata store, and how to close it (flushes pending writes). */
export async function openCredentialRegistry(
  dataDir: string, metadataCfg: MetadataConfig = { backend: 'local' },
): Promise<{ registry: CredentialRegistry; close(): Promise<void> }> {
  mkdirSync(resolve(dataDir), { recursive: true });
  const lock = lockDataDir(resolve(dataDir)); // throws while a star runs on this data dir
  // On postgres, the schema's lock also refuses while a star owns it.
  const metadata = openMetadataStore(metadataCfg, resolve(dataDir));
  try {
    await metadata.load();
  } catch (err) {
    await metadata.close().catch(() => undefined);
    lock.release();
    throw err;
  }
  return {
    registry: new CredentialRegistry(credentialStoreOf(metadata)),
    close: async () => { await metadata.close(); lock.release(); },
  };
}

function need(flags: Flags, name: string, command: string): string {
  const v = flags.str(name);
  if (v === undefined || v === '') throw new UsageError(`${command} needs --${name}`);
  return v;
}

/** Runs `svcd credentials …` (argv after the word `credentials`) and answers the exit code. */
export async function runCredentialsCli(argv: string[], io: CliIo = STDIO, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let parsed: Parsed;
  try {
    parsed = parseArgs(argv, env);
  } catch (err) {
    io.err(`svcd credentials: ${(err as Error).message}`);
    io.err(CREDENTIALS_USAGE);
    return 2;
  }
  const { command, flags } = parsed;
  if (command === 'help') {
    io.out(CREDENTIALS_USAGE);
    return 0;
  }
  let opened: Awaited<ReturnType<typeof openCredentialRegistry>> | undefined;
  try {
    for (const name of flags.given()) {
      const allowed = name === 'data-dir' || (name === 'scope' && command === 'create') ||
        (name === 'key-id' && (command === 'revoke' || command === 'create'));
      if (!allowed) throw new UsageError(`--${name} does not apply to ${command}`);
    }
    const dataDir = flags.str('data-dir');
    if (dataDir === undefined || dataDir === '') throw new UsageError('needs --data-dir (or SVCD_DATA_DIR)');
    const metadataCfg = metadataConfigFromEnv(env);
    // Reading or revoking in a directory that holds no star is a typo, not an empty registry.
    if (metadataCfg.backend === 'local' && command !== 'create' && !existsSync(join(resolve(dataDir), 'meta'))) {
      io.err(`svcd credentials: ${resolve(dataDir)} holds no star metadata (no meta/ directory)`);
      return 1;
    }
    const scope = command === 'create' ? need(flags, 'scope', 'create') : '';
    const keyId = command === 'revoke' ? need(flags, 'key-id', 'revoke') : flags.str('key-id') ?? '';
    opened = await openCredentialRegistry(dataDir, metadataCfg);
    const { registry } = opened;
    switch (command) {
      case 'create': {
        const created = await registry.create(scope, keyId);
        io.out(JSON.stringify(created));
        io.err('svcd credentials: the secret is shown this once');
        return 0;
      }
      case 'list': {
        let startAfter = '';
        do {
          const page = await registry.list(startAfter);
          for (const row of page.items) io.out(JSON.stringify(row));
          startAfter = page.next;
        } while (startAfter !== '');
        return 0;
      }
      case 'revoke': {
        io.out(JSON.stringify(await registry.revoke(keyId)));
        io.err('svcd credentials: revoked');
        return 0;
      }
    }
    return 2; // unreachable: parseArgs admits only the commands above
  } catch (err) {
    if (err instanceof UsageError || err instanceof FlagError) {
      io.err(`svcd credentials: ${err.message}`);
      io.err(CREDENTIALS_USAGE);
      return 2;
    }
    if (err instanceof ServiceError) {
      io.err(`svcd credentials: ${err.message}`);
      return 1;
    }
    io.err(`svcd credentials: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    await opened?.close();
  }
}
