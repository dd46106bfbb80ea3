// The api-key registry: long-lived (key id, secret) credentials that the exchange trades for short
// tokens. Only the SHA-256 of a secret is kept; the secret is shown once at create. Credentials
// never expire and are checked against the store on every exchange, so a revoke is immediate.
// Storage is a three-method port the lead backs with the MetadataStore.

import { createHash, randomBytes as nodeRandomBytes, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../protocol/errors.ts';
import type { ListPage } from '../core/service-api.ts';
import type { RootSeed } from './config.ts';
import { parseStoredScope, type ParsedScope } from './scope.ts';

export type CredentialState = 'active' | 'revoked';

export interface CredentialRow {
  key_id: string;
  /** Lowercase hex SHA-256 of the secret's UTF-8 bytes. */
  secret_hash: string;
  /** Grants in the scope grammar. */
  scope: string;
  state: CredentialState;
  created_at_unix_ms: number;
  revoked_at_unix_ms?: number;
  /** Set on a row that a root seed made or took over, when it did: a newer seed under another key
   *  id revokes it (spec: "Regenerating the seed is the rotation"). Never listed. */
  seeded_at_unix_ms?: number;
}

/** A row as listings show it: never the secret, never its hash. */
export type CredentialInfo = Omit<CredentialRow, 'secret_hash' | 'seeded_at_unix_ms'>;

export interface CreatedCredential extends CredentialInfo {
  /** Shown this once; only its hash is stored. */
  secret: string;
}

export interface CredentialStore {
  get(keyId: string): Promise<CredentialRow | undefined>;
  put(row: CredentialRow): Promise<void>;
  list(): Promise<CredentialRow[]>;
}

export interface RegistryOptions {
  now?: () => number;
  randomBytes?: (n: number) => Uint8Array;
  /** Where a stored scope's skipped tokens are reported (at create and at the root seed). */
  log?: (msg: string) => void;
}

export const KEY_ID_PREFIX = 'ck_';
/**
 * A key id given by the operator (CreateCredential's key_id, `credentials create --key-id`, the
 * root seed): 1-128 characters of A-Z a-z 0-9 _ . -. Printable in logs and listings, safe in a
 * JWT sub, and never whitespace or `:` (which the scope and Basic syntaxes split on).
 */
const KEY_ID_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
export const KEY_ID_RULE = '1-128 characters of A-Z a-z 0-9 _ . -';

export function isValidKeyId(keyId: string): boolean {
  return KEY_ID_PATTERN.test(keyId);
}

/** 8 random bytes: the spec's 16 hex digits after `ck_`. */
const KEY_ID_RANDOM_BYTES = 8;
/** 32 random bytes (256 bits) of secret, base64url: unguessable, and hashing it unsalted is safe. */
const SECRET_RANDOM_BYTES = 32;
export const CREDENTIALS_PAGE_MAX = 1000;
/** Collisions in 64 random bits are not expected; the bound only keeps a broken RNG from spinning. */
const KEY_ID_ATTEMPTS_MAX = 8;

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

function hashesEqual(aHex: string, bHex: string): boolean {
  const a = Buffer.from(aHex, 'hex');
  const b = Buffer.from(bHex, 'hex');
  // Both are SHA-256 hex, so equal lengths; a corrupt stored hash simply never matches.
  return a.length === 32 && b.length === 32 && timingSafeEqual(a, b);
}

/** Compared against when the key id is unknown, so a miss costs what a wrong secret costs. */
const DUMMY_HASH = hashSecret('svcd-no-such-credential');

function info(row: CredentialRow): CredentialInfo {
  const { secret_hash: _hash, seeded_at_unix_ms: _seeded, ...rest } = row;
  return rest;
}

export class CredentialRegistry {
  private readonly now: () => number;
  private readonly random: (n: number) => Uint8Array;
  private readonly log: (msg: string) => void;
  /** Key ids being created right now: two concurrent creates of one given id cannot both win. */
  private readonly creating = new Set<string>();

  constructor(private readonly store: CredentialStore, options: RegistryOptions = {}) {
    this.now = options.now ?? Date.now;
    this.log = options.log ?? ((msg) => console.warn(msg));
    this.random = options.randomBytes ?? ((n) => nodeRandomBytes(n));
  }

  /**
   * Create an active credential; the returned secret is never retrievable again. A non-empty
   * `keyId` is registered as given (InvalidArgument unless it follows KEY_ID_RULE, AlreadyExists
   * when taken, revoked rows included); '' generates `ck_` + 16 hex digits.
   */
  async create(scope: string, keyId = ''): Promise<CreatedCredential> {
    // Rule 5: a malformed token is stored as given (the listing shows what was asked) and grants
    // nothing; the operator is told here, once, rather than at every use.
    parseStoredScope(scope, (token, reason) => this.log(`auth: credential ${keyId || '(new)'}: scope token '${token}' grants nothing and is skipped: ${reason}`));
    if (keyId !== '' && !isValidKeyId(keyId)) throw new ServiceError('invalid_argument', `key_id must be ${KEY_ID_RULE}`);
    let id = keyId;
    for (let attempt = 0; ; attempt++) {
      if (keyId === '') {
        if (attempt >= KEY_ID_ATTEMPTS_MAX) throw new ServiceError('internal', 'could not allocate a credential key id');
        id = KEY_ID_PREFIX + Buffer.from(this.random(KEY_ID_RANDOM_BYTES)).toString('hex');
      }
      // The claim follows the lookup with no await between, so two creates never share an id.
      const free = (await this.store.get(id)) === undefined && !this.creating.has(id);
      if (free) break;
      if (keyId !== '') throw new ServiceError('already_exists', `credential ${id} already exists`);
    }
    this.creating.add(id);
    try {
      const secret = Buffer.from(this.random(SECRET_RANDOM_BYTES)).toString('base64url');
      const row: CredentialRow = {
        key_id: id, secret_hash: hashSecret(secret), scope, state: 'active', created_at_unix_ms: this.now(),
      };
      await this.store.put(row);
      return { ...info(row), secret };
    } finally {
      this.creating.delete(id);
    }
  }

  /** A page in key id order; pass `next` back as startAfter. */
  async list(startAfter = '', limit = CREDENTIALS_PAGE_MAX): Promise<ListPage<CredentialInfo>> {
    const cap = Math.max(1, Math.min(limit, CREDENTIALS_PAGE_MAX));
    const rows = (await this.store.list())
      .filter((r) => r.key_id > startAfter)
      .sort((a, b) => (a.key_id < b.key_id ? -1 : a.key_id > b.key_id ? 1 : 0));
    const items = rows.slice(0, cap).map(info);
    return { items, next: rows.length > cap ? items[items.length - 1].key_id : '' };
  }

  /** Revoke: immediate for exchanges; tokens already minted live out their TTL. Idempotent. */
  async revoke(keyId: string): Promise<CredentialInfo> {
    const row = await this.store.get(keyId);
    if (row === undefined) throw new ServiceError('not_found', 'credential not found');
    if (row.state === 'revoked') return info(row);
    const revoked: CredentialRow = { ...row, state: 'revoked', revoked_at_unix_ms: this.now() };
    await this.store.put(revoked);
    return info(revoked);
  }

  /**
   * Check a (key id, secret) pair. An unknown key id and a wrong secret are the same 401, and take
   * the same work; only a caller holding the right secret learns that the key is revoked (403).
   */
  async verifySecret(keyId: string, secret: string): Promise<{ row: CredentialInfo; scope: ParsedScope }> {
    const row = await this.store.get(keyId);
    const ok = hashesEqual(hashSecret(secret), row?.secret_hash ?? DUMMY_HASH);
    if (row === undefined || !ok) throw new ServiceError('unauthenticated', 'unknown key id or wrong secret');
    if (row.state !== 'active') throw new ServiceError('permission_denied', 'credential revoked');
    let scope: ParsedScope;
    try {
      scope = parseStoredScope(row.scope);
    } catch {
      // A stored row past the token cap (edited by hand) grants nothing rather than something.
      throw new ServiceError('permission_denied', 'credential scope is not valid');
    }
    return { row: info(row), scope };
  }

  /**
   * Converge the root seed into the registry, at every start: created when absent, hash and scope
   * overwritten when drifted. State is left alone: a revoked root stays revoked until the seed names
   * a new key id, so restarting a star never undoes an operator's revoke.
   */
  async convergeRootSeed(seed: RootSeed): Promise<'created' | 'updated' | 'unchanged'> {
    parseStoredScope(seed.scope, (token, reason) => this.log(`auth: root seed ${seed.key_id}: scope token '${token}' grants nothing and is skipped: ${reason}`));
    const row = await this.store.get(seed.key_id);
    const hash = seed.secret_hash.toLowerCase();
    const now = this.now();
    let outcome: 'created' | 'updated' | 'unchanged';
    let seededAt: number;
    if (row === undefined) {
      seededAt = now;
      await this.store.put({ key_id: seed.key_id, secret_hash: hash, scope: seed.scope, state: 'active', created_at_unix_ms: now, seeded_at_unix_ms: seededAt });
      outcome = 'created';
    } else {
      // A row without the mark (made before the mark existed, or by hand) is dated by its creation,
      // never by this start: a star restarted with an old seed mid-rollout must find it older than
      // the new seed, not newer.
      seededAt = row.seeded_at_unix_ms ?? row.created_at_unix_ms;
      outcome = row.secret_hash === hash && row.scope === seed.scope ? 'unchanged' : 'updated';
      // Said at every start: the operator who revoked it meant to, but one who forgot finds out why
      // the seed's secret is refused (403) without reading the registry.
      if (row.state === 'revoked') this.log(`auth: root seed ${seed.key_id} names a revoked credential: it stays revoked; a seed under a new key id is the rotation`);
      if (outcome === 'updated' || row.seeded_at_unix_ms === undefined) {
        await this.store.put({ ...row, secret_hash: hash, scope: seed.scope, seeded_at_unix_ms: seededAt });
      }
    }
    // A seed under a new key id is a rotation: every older seed's row is revoked. Only older ones: a
    // star restarted with the previous seed during a rolling change must not revoke the new one.
    for (const other of await this.store.list()) {
      if (other.key_id === seed.key_id || other.state !== 'active' || other.seeded_at_unix_ms === undefined || other.seeded_at_unix_ms >= seededAt) continue;
      await this.store.put({ ...other, state: 'revoked', revoked_at_unix_ms: now });
      this.log(`auth: root seed rotated to ${seed.key_id}; the previous seed ${other.key_id} is revoked`);
    }
    return outcome;
  }
}

/** A CredentialStore in memory, for tests and for the embedded single-star default. */
export class MemoryCredentialStore implements CredentialStore {
  private readonly rows = new Map<string, CredentialRow>();
  async get(keyId: string): Promise<CredentialRow | undefined> {
    const row = this.rows.get(keyId);
    return row === undefined ? undefined : { ...row };
  }
  async put(row: CredentialRow): Promise<void> {
    this.rows.set(row.key_id, { ...row });
  }
  async list(): Promise<CredentialRow[]> {
    return [...this.rows.values()].map((r) => ({ ...r }));
  }
}
