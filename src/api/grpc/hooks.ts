// The options of the gRPC adapter beyond the StreamService: hooks other modules plug in. Every hook
// is optional; an absent one has a documented fallback, so the adapter serves with none.

import type * as grpc from '@grpc/grpc-js';
import type { ListPage } from '../../core/service-api.ts';
import type { ExchangeRequest, ExchangedToken } from '../../protocol/resources.ts';

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
  /** Append, AppendSession, Fence: the fencing token presented (undefined: none), for the
   *  credential's svc_aux.fencing_token pin. */
  fencing_token?: string;
}

/** What the auth hook learned about the caller. */
export interface GrpcCaller {
  /** The credential's exp (ms since the epoch): the call's deadline; sessions and subscriptions end there. */
  expMs?: number;
}

/** The exchange's ask and answer are the HTTP surface's (src/protocol/resources.ts): exactly one of
 *  bucket / scope is set; an absent ttl_seconds is the default (15 minutes). */
export type TokenExchangeRequest = ExchangeRequest;
export type IssuedToken = ExchangedToken;

export interface CredentialRow {
  key_id: string;
  /** Space-separated grants. */
  scope: string;
  state: 'active' | 'revoked';
  created_at_unix_ms: number;
}

/** src/auth plugs in here. Every method throws ServiceError (unauthenticated, permission_denied, …). */
export interface GrpcAuthHooks {
  /** Checks the caller before every verb but ExchangeToken (grants, and the fencing pin for the
   *  verbs that present a token). Absent: every caller passes (`--auth off`). */
  authorize?(req: GrpcAuthRequest): void | GrpcCaller | Promise<void | GrpcCaller>;
  /** Only checks who the caller is (no grants): run before a malformed request is reported, so an
   *  anonymous caller is told UNAUTHENTICATED whatever it sent, as over HTTP. */
  authenticate?(metadata: grpc.Metadata): Promise<void>;
  /** Absent: ExchangeToken answers UNIMPLEMENTED (as under a verify-only JWT source). */
  exchangeToken?(req: TokenExchangeRequest): Promise<IssuedToken>;
  /** Absent (with the two below): the credential verbs answer UNIMPLEMENTED. */
  createCredential?(req: { key_id: string; scope: string }): Promise<{ credential: CredentialRow; secret: string }>;
  listCredentials?(startAfter: string, limit: number): Promise<ListPage<CredentialRow>>;
  revokeCredential?(keyId: string): Promise<CredentialRow>;
}

/** How ReadPlan locates the objects it vends (`--readplan-vending`, `--readplan-ttl`). */
export interface ReadPlanVending {
  /** The star's mode, used when a request leaves `mode` unspecified. A request may ask for raw only
   *  on a star configured raw (raw is for trust-domain consumers). */
  mode: 'presigned' | 'raw';
  /** Plan validity; presigned URLs expire with the plan. */
  ttlMs: number;
  /** Raw mode: the storage bucket named in entries (the fs root directory, or the S3 bucket). */
  storageBucket: string;
  /** Presigned mode: signs a GET of one object until `expiresAtMs` (by the star for fs, by S3's own
   *  query signing for s3). Absent (fs without a data bridge to serve the URLs): presigned plans
   *  answer FAILED_PRECONDITION. */
  presign?(o: { objectKey: string; sizeBytes: number; expiresAtMs: number }): string | Promise<string>;
}

/** The star this adapter fronts. A single star is a one-star cluster. */
export interface GrpcStarHooks {
  /** Star identity; default 'star-0'. */
  id?: string;
  /** Address shown by ListStars; default: the bound listen address. */
  address?: string;
  /** Settles the WAL now (SettleStar). Absent: SettleStar succeeds; settling runs on its own schedule. */
  settle?(): Promise<void>;
  /** Wall clock for plan expiry and stats stamps; default Date.now. */
  nowMs?(): number;
}
