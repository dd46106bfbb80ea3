// The options of the gRPC adapter beyond the StreamService: hooks other modules plug in. Every hook
// is optional; an absent one has a documented fallback, so the adapter serves with none.

import type * as grpc from '@grpc/grpc-js';
import type { ListPage } from '../../core/service-api.ts';

/** What a verb touches, handed to `authorize` before the address resolves (never an existence oracle). */
export interface GrpcAuthRequest {
  /** The verb's name as in the proto, e.g. 'Append', 'ListBuckets', 'Drain'. */
  verb: string;
  /** 'data' for DataService (except SettleStar), 'admin' for AdminService, 'node' for SettleStar. */
  plane: 'data' | 'admin' | 'node';
  /** The call's request metadata (the `authorization` header lives here). */
  metadata: grpc.Metadata;
  /** Bucket named by the request; undefined for verbs without one (ListBuckets, admin cluster verbs). */
  bucket?: string;
  /** Stream key named by the request; undefined for bucket-level verbs. */
  key?: string;
}

export interface TokenExchangeRequest {
  key_id: string;
  secret: string;
  /** Exactly one of bucket / scope is set. */
  bucket?: string;
  scope?: string;
  /** 0 means the default (15 minutes). */
  ttl_seconds: number;
}

export interface IssuedToken {
  token: string;
  expires_at_unix_ms: number;
}

export interface CredentialRow {
  key_id: string;
  /** Space-separated grants. */
  scope: string;
  state: 'active' | 'revoked';
  created_at_unix_ms: number;
}

/** src/auth plugs in here. Every method throws ServiceError (unauthenticated, permission_denied, …). */
export interface GrpcAuthHooks {
  /** Checks the caller before every verb but ExchangeToken. Absent: every caller passes (`--auth off`). */
  authorize?(req: GrpcAuthRequest): void | Promise<void>;
  /** Absent: ExchangeToken answers UNIMPLEMENTED (as under a verify-only JWT source). */
  exchangeToken?(req: TokenExchangeRequest): Promise<IssuedToken>;
  /** Absent (with the two below): the credential verbs answer UNIMPLEMENTED. */
  createCredential?(req: { key_id: string; scope: string }): Promise<{ credential: CredentialRow; secret: string }>;
  listCredentials?(startAfter: string, limit: number): Promise<ListPage<CredentialRow>>;
  revokeCredential?(keyId: string): Promise<CredentialRow>;
}

/** One vended object of a read plan, as storage describes it. */
export interface ReadPlanEntryInfo {
  location: { presigned_url: string } | { storage_bucket: string; object_key: string };
  footer_offset: number;
  footer_length: number;
  payload_bytes: number;
  first_seq_num: number;
  end_seq_num: number;
  min_timestamp_ms: number;
  max_timestamp_ms: number;
}

export interface ReadPlanQuery {
  start: { kind: 'seq_num'; value: number } | { kind: 'timestamp_ms'; value: number };
  end_seq_num?: number;
  /** Already clamped to 1..READPLAN_ENTRIES_MAX. */
  max_entries: number;
  /** undefined: the star's configured mode. */
  mode?: 'presigned' | 'raw';
}

export interface ReadPlanResult {
  entries: ReadPlanEntryInfo[];
  vended_until?: number;
  more: boolean;
  expires_at_unix_ms: number;
}

/** The star this adapter fronts. A single star is a one-star cluster. */
export interface GrpcStarHooks {
  /** Star identity; default 'star-0'. */
  id?: string;
  /** Address shown by ListStars; default: the bound listen address. */
  address?: string;
  /** Settles the WAL now (SettleStar). Absent: SettleStar succeeds; settling runs on its own schedule. */
  settle?(): Promise<void>;
  /** Vends settled segments (ReadPlan). Absent: an empty plan with vended_until = the start, so the
   *  consumer reads the whole range through Read/Subscribe. */
  readPlan?(bucket: string, key: string, query: ReadPlanQuery): Promise<ReadPlanResult>;
  /** Wall clock for plan expiry and stats stamps; default Date.now. */
  nowMs?(): number;
}
