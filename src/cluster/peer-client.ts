// Star-to-star calls: a gRPC client that asks a peer to settle now (DataService.SettleStar), under
// the one auth mode of the cluster (spec: Gateway, bridge and peers). The credential is the auth
// module's peer credential (auth/peer.ts); the transport is the star's own: TLS whenever its gRPC
// port serves TLS, with its serving certificate as the client certificate (what mtls checks).

import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { loadSvcProto } from '../api/grpc/proto.ts';
import { PEER_CALL_MS_MAX } from '../config/limits.ts';
import type { PeerCredentials } from '../auth/peer.ts';
import type { DataServiceClient } from '../gen/svc/v1/DataService.ts';
import type { StarRow } from '../storage/metadata/postgres-cluster.ts';

/** The star's TLS files, as --tls-cert, --tls-key and --tls-client-ca name them. */
export interface PeerTlsFiles {
  cert: string;
  key: string;
  /** Under mtls the client CA signed every star's serving certificate (each is presented as a
   *  client certificate), so it is also what verifies a peer's server side. Absent: system roots. */
  ca?: string | undefined;
}

export interface PeerClientOptions {
  /** Absent: the star serves plaintext gRPC, and so do its peers. */
  tls?: PeerTlsFiles | undefined;
  /** Absent: auth off (no Authorization is sent). */
  credentials?: PeerCredentials | undefined;
  callMsMax?: number;
}

export interface PeerClient {
  /** SettleStar on the peer's gRPC address; rejects with the call's error (or when it has none). */
  settle(peer: StarRow): Promise<void>;
  /** Closes every channel; later calls reject. */
  close(): void;
}

export function createPeerClient(opts: PeerClientOptions): PeerClient {
  const { proto } = loadSvcProto();
  // Read once at start: a file that changes later takes a restart, as the server's own does.
  const channelCredentials = opts.tls
    ? grpc.credentials.createSsl(
      opts.tls.ca !== undefined ? readFileSync(opts.tls.ca) : null,
      readFileSync(opts.tls.key),
      readFileSync(opts.tls.cert),
    )
    : grpc.credentials.createInsecure();
  const callMsMax = opts.callMsMax ?? PEER_CALL_MS_MAX;
  // One channel per peer address, reused for every call to it (a drain may ask the same peer again).
  const clients = new Map<string, DataServiceClient>();
  let closed = false;

  const clientFor = (address: string): DataServiceClient => {
    let c = clients.get(address);
    if (c === undefined) {
      c = new proto.svc.v1.DataService(address, channelCredentials);
      clients.set(address, c);
    }
    return c;
  };

  return {
    async settle(peer) {
      if (closed) throw new Error('peer client closed');
      if (peer.grpc_address === '') throw new Error(`star ${peer.star_id} has no gRPC address`);
      const metadata = new grpc.Metadata();
      const authorization = await opts.credentials?.authorization();
      if (authorization !== undefined) metadata.set('authorization', authorization);
      const client = clientFor(peer.grpc_address);
      await new Promise<void>((resolve, reject) => {
        client.SettleStar({ star_id: peer.star_id }, metadata, { deadline: Date.now() + callMsMax }, (err) => {
          if (err) reject(err);
          else resolve();
        });
      });
    },
    close() {
      closed = true;
      for (const c of clients.values()) c.close();
      clients.clear();
    },
  };
}
