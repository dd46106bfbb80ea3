// The gRPC side of the client (Node only, through @grpc/grpc-js): producer sessions, and the admin
// plane's credential verbs. It loads the schema from proto/ as the server does.
//
// `producer()` is the batching producer of producer.ts over an AppendSession: a session keeps order,
// so batches pipeline without match_seq_num; when a session ends, the next batch opens a new one (with
// a refreshed token after the token's exp), and appendSafely decides which batches may be sent again.

import * as grpc from '@grpc/grpc-js';
import { loadSvcProto } from '../../api/grpc/proto.ts';
import type { DataServiceClient } from '../../gen/svc/v1/DataService.ts';
import type { AdminServiceClient } from '../../gen/svc/v1/AdminService.ts';
import type { ReadResponse__Output } from '../../gen/svc/v1/ReadResponse.ts';
import { keyBytes, type StreamAddress } from '../address.ts';
import { SvcError } from '../errors.ts';
import { Producer, type BatchSink, type ProducerOptions } from '../producer.ts';
import type { TokenProvider } from '../http/transport.ts';
import type { AppendAck, AppendOptions, AppendRecord, Position, ReadRecord } from '../types.ts';
import { fromGrpcError } from './errors.ts';
import { AppendSession } from './session.ts';

/** A Read page may carry 8 MiB; grpc-js receives 4 MiB by default. The server allows 128 MiB. */
export const GRPC_MESSAGE_BYTES_MAX = 128 * 1024 * 1024;
/** Deadline of one unary call. */
export const GRPC_CALL_TIMEOUT_MS_DEFAULT = 30_000;
/** Records per Read when reading back (the server clamps at 8192). */
const READ_BACK_PAGE_RECORDS = 1000;
/** Stars a client keeps a channel to after a NOT_OWNER named them (a cluster's leaders); past it the
 *  one used longest ago is closed (calls already started on it go on; its users open a new one). */
export const LEADER_CHANNELS_MAX = 64;
/** A unary call follows NOT_OWNER at most this many times: two stars whose views of the membership
 *  differ for a moment may name each other, and the caller's retry then starts over. */
export const NOT_OWNER_HOPS_MAX = 3;

export interface GrpcClientOptions {
  /** host:port of the star's gRPC listener. */
  address: string;
  /** Plaintext when absent. */
  credentials?: grpc.ChannelCredentials;
  token?: string | TokenProvider;
  callTimeoutMs?: number;
}

export interface Credential {
  key_id: string;
  scope: string;
  state: 'active' | 'revoked' | 'unspecified';
  created_at_unix_ms: number;
}

type Unary<Req, Res> = (req: Req, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: Res) => void) => unknown;
/** A call's method on the client it goes through (the star asked, or a leader it named). */
type Pick<Req, Res> = (c: GrpcClient) => Unary<Req, Res>;

function credentialFromWire(c: { key_id: string; scope: string; state: string; created_at_unix_ms: number | string | { toString(): string } }): Credential {
  const state = c.state === 'CREDENTIAL_STATE_ACTIVE' ? 'active' : c.state === 'CREDENTIAL_STATE_REVOKED' ? 'revoked' : 'unspecified';
  return { key_id: c.key_id, scope: c.scope, state, created_at_unix_ms: Number(c.created_at_unix_ms) };
}

export class GrpcClient {
  readonly data: DataServiceClient;
  readonly admin: AdminServiceClient;
  private readonly callTimeoutMs: number;
  /** Channels to the leaders NOT_OWNER named, by gRPC address (at most LEADER_CHANNELS_MAX). */
  private readonly leaders = new Map<string, GrpcClient>();

  constructor(private readonly opts: GrpcClientOptions) {
    const { proto } = loadSvcProto();
    const creds = opts.credentials ?? grpc.credentials.createInsecure();
    const channel = { 'grpc.max_receive_message_length': GRPC_MESSAGE_BYTES_MAX, 'grpc.max_send_message_length': GRPC_MESSAGE_BYTES_MAX };
    this.data = new proto.svc.v1.DataService(opts.address, creds, channel);
    this.admin = new proto.svc.v1.AdminService(opts.address, creds, channel);
    this.callTimeoutMs = opts.callTimeoutMs ?? GRPC_CALL_TIMEOUT_MS_DEFAULT;
  }

  close(): void {
    this.data.close();
    this.admin.close();
    for (const c of this.leaders.values()) c.close();
    this.leaders.clear();
  }

  /** The client for the star at `address` (a leader a NOT_OWNER named), with this one's credentials;
   *  undefined for this client's own star. */
  private at(address: string): GrpcClient | undefined {
    if (address === this.opts.address) return undefined;
    let c = this.leaders.get(address);
    if (c) {
      this.leaders.delete(address); // most recently used last
    } else {
      if (this.leaders.size >= LEADER_CHANNELS_MAX) {
        const [oldest, old] = this.leaders.entries().next().value as [string, GrpcClient];
        this.leaders.delete(oldest);
        old.close();
      }
      c = new GrpcClient({ ...this.opts, address });
    }
    this.leaders.set(address, c);
    return c;
  }

  async metadata(refresh = false): Promise<grpc.Metadata> {
    const md = new grpc.Metadata();
    const t = typeof this.opts.token === 'function' ? await this.opts.token({ refresh }) : this.opts.token;
    if (t !== undefined) md.set('authorization', `Bearer ${t}`);
    return md;
  }

  /** One call, at the star asked, or at the leader a NOT_OWNER names (a cluster), following at most
   *  NOT_OWNER_HOPS_MAX of them. */
  private async unary<Req, Res>(pick: Pick<Req, Res>, req: Req, what: string): Promise<Res> {
    let leader: GrpcClient | undefined;
    for (let hops = 0; ; hops++) {
      const target = leader ?? this;
      try {
        return await target.unaryOnce(pick(target), req, what);
      } catch (err) {
        if (!(err instanceof SvcError) || !err.leader || hops >= NOT_OWNER_HOPS_MAX) throw err;
        leader = this.at(err.leader.grpc_address);
      }
    }
  }

  private async unaryOnce<Req, Res>(method: Unary<Req, Res>, req: Req, what: string): Promise<Res> {
    const md = await this.metadata();
    return await new Promise<Res>((resolve, reject) => {
      method(req, md, { deadline: Date.now() + this.callTimeoutMs }, (err, res) => {
        if (err) reject(fromGrpcError(err, what, false, what === 'Read'));
        else resolve(res as Res);
      });
    });
  }

  // ------------------------------------------------------------------ data plane

  /** Opens a producer session on a stream (its open is checked by the server with the first ack). */
  async openSession(a: StreamAddress, opts: { fencingToken?: string; refreshToken?: boolean } = {}): Promise<AppendSession> {
    const call = this.data.appendSession(await this.metadata(opts.refreshToken ?? false));
    return new AppendSession(call, a, opts.fencingToken);
  }

  async checkTail(a: StreamAddress): Promise<Position> {
    const r = await this.unary((c) => c.data.checkTail.bind(c.data) as Unary<object, { tail: { seq_num: number; timestamp_ms: number } | null }>,
      { bucket: a.bucket, key: keyBytes(a.key) }, 'CheckTail');
    return { seq_num: Number(r.tail?.seq_num ?? 0), timestamp_ms: Number(r.tail?.timestamp_ms ?? 0) };
  }

  /** Records [start, start + count), or fewer if the stream ends sooner. */
  async readRange(a: StreamAddress, start: number, count: number): Promise<ReadRecord[]> {
    const out: ReadRecord[] = [];
    while (out.length < count) {
      const r = await this.unary((c) => c.data.read.bind(c.data) as Unary<object, ReadResponse__Output>,
        { bucket: a.bucket, key: keyBytes(a.key), seq_num: start + out.length, limit: Math.min(READ_BACK_PAGE_RECORDS, count - out.length) }, 'Read');
      if (r.records.length === 0) break;
      for (const rec of r.records) {
        out.push({
          seq_num: Number(rec.seq_num), timestamp_ms: Number(rec.timestamp_ms), body: new Uint8Array(rec.body),
          headers: rec.headers.map((h) => ({ name: new Uint8Array(h.name), value: new Uint8Array(h.value) })),
        });
      }
    }
    return out.slice(0, count);
  }

  /** A batching producer over append sessions (see the file comment and producer.ts). */
  producer(a: StreamAddress, opts: ProducerOptions = {}): Producer {
    return new Producer(this.sessionSink(a, opts.fencingToken), opts);
  }

  /** The producer's view of a stream over sessions: one live session, reopened when it ends. In a
   *  cluster the next session opens at the leader a NOT_OWNER named, and at the star asked again when
   *  that leader cannot be reached. */
  sessionSink(a: StreamAddress, fencingToken?: string): BatchSink {
    let session: AppendSession | undefined;
    let opening: Promise<AppendSession> | undefined;
    let refresh = false;
    /** Where sessions open: the gRPC address of the leader a NOT_OWNER named (undefined: the star
     *  asked), resolved to a channel at each open (a channel may have been closed by the cap since). */
    let leader: string | undefined;
    const current = async (): Promise<AppendSession> => {
      if (session && !session.ended) return session;
      opening ??= ((leader !== undefined ? this.at(leader) : undefined) ?? this).openSession(a, { ...(fencingToken !== undefined ? { fencingToken } : {}), refreshToken: refresh })
        .then((s) => { session = s; refresh = false; return s; })
        .finally(() => { opening = undefined; });
      return await opening;
    };
    return {
      ordered: true,
      append: async (records: readonly AppendRecord[], o: AppendOptions): Promise<AppendAck> => {
        const s = await current();
        try {
          return await s.append(records, o.matchSeqNum);
        } catch (err) {
          if (err instanceof SvcError && (err.kind === 'auth_expired' || err.kind === 'unauthenticated')) refresh = true;
          if (err instanceof SvcError && err.leader) leader = err.leader.grpc_address;
          else if (!(err instanceof SvcError) || err.kind === 'connection') leader = undefined;
          throw err;
        }
      },
      readRange: (start, count) => this.readRange(a, start, count),
      checkTail: () => this.checkTail(a),
      close: async () => {
        const s = session;
        session = undefined;
        if (s && !s.ended) await s.close();
      },
    };
  }

  // ------------------------------------------------------------------ admin plane (credentials)

  /** Creates an api-key credential; the secret is in the answer, once. */
  async createCredential(req: { scope: string; keyId?: string }): Promise<{ credential: Credential; secret: string }> {
    const r = await this.unary((c) => c.admin.createCredential.bind(c.admin) as Unary<object, { credential: Parameters<typeof credentialFromWire>[0] | null; secret: string }>,
      { key_id: req.keyId ?? '', scope: req.scope }, 'CreateCredential');
    if (!r.credential) throw new SvcError('protocol', 'CreateCredential answered no credential');
    return { credential: credentialFromWire(r.credential), secret: r.secret };
  }

  /** Every credential, page after page (never a secret or hash). */
  async *credentials(): AsyncGenerator<Credential> {
    let cursor = '';
    for (;;) {
      const r = await this.unary((c) => c.admin.listCredentials.bind(c.admin) as Unary<object, { credentials: Parameters<typeof credentialFromWire>[0][]; next: string }>,
        { start_after: cursor, limit: 0 }, 'ListCredentials');
      for (const c of r.credentials) yield credentialFromWire(c);
      if (r.next === '' || r.credentials.length === 0) return;
      cursor = r.next;
    }
  }

  async revokeCredential(keyId: string): Promise<void> {
    await this.unary((c) => c.admin.revokeCredential.bind(c.admin) as Unary<object, object>, { key_id: keyId }, 'RevokeCredential');
  }
}
