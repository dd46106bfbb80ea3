// Test client plumbing: a real @grpc/grpc-js client over loopback, typed by the generated types,
// a promise wrapper for unary calls, and a decoder for the typed error details.
import * as grpc from '@grpc/grpc-js';
import { loadSvcProto } from '../../src/api/grpc/proto.ts';
import { GRPC_MESSAGE_BYTES_MAX } from '../../src/api/grpc/server.ts';
import { decodeRpcStatus, STATUS_DETAILS_KEY } from '../../src/api/grpc/rpc-status.ts';
import type { DataServiceClient } from '../../src/gen/svc/v1/DataService.ts';
import type { AdminServiceClient } from '../../src/gen/svc/v1/AdminService.ts';
import type { FenceDetail__Output } from '../../src/gen/svc/v1/FenceDetail.ts';
import type { SequenceDetail__Output } from '../../src/gen/svc/v1/SequenceDetail.ts';

export interface Clients {
  data: DataServiceClient;
  admin: AdminServiceClient;
  close(): void;
}

/** Plaintext by default; `creds` for a TLS star (grpc.credentials.createSsl). */
export function connect(port: number, creds: grpc.ChannelCredentials = grpc.credentials.createInsecure()): Clients {
  const { proto } = loadSvcProto();
  // A Read page may carry 8 MiB: above grpc-js's 4 MiB default receive limit.
  const options = { 'grpc.max_receive_message_length': GRPC_MESSAGE_BYTES_MAX, 'grpc.max_send_message_length': GRPC_MESSAGE_BYTES_MAX };
  const data = new proto.svc.v1.DataService(`127.0.0.1:${port}`, creds, options);
  const admin = new proto.svc.v1.AdminService(`127.0.0.1:${port}`, creds, options);
  return { data, admin, close: () => { data.close(); admin.close(); } };
}

type UnaryMethod<Req, Res> = (req: Req, cb: (err: grpc.ServiceError | null, res?: Res) => void) => unknown;

/** Calls a unary method bound to its client and resolves with the answer (rejects with the ServiceError). */
export function call<Req, Res>(method: UnaryMethod<Req, Res>, req: Req): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    method(req, (err, res) => {
      if (err) reject(err);
      else resolve(res as Res);
    });
  });
}

type UnaryMethodMd<Req, Res> = (req: Req, md: grpc.Metadata, cb: (err: grpc.ServiceError | null, res?: Res) => void) => unknown;

/** As `call`, with request metadata (e.g. the bearer). Every generated unary method also takes
 *  (request, metadata, callback); typed by its (request, callback) overload. */
export function callMd<Req, Res>(method: UnaryMethod<Req, Res>, req: Req, md: grpc.Metadata): Promise<Res> {
  return new Promise<Res>((resolve, reject) => {
    (method as unknown as UnaryMethodMd<Req, Res>)(req, md, (err, res) => {
      if (err) reject(err);
      else resolve(res as Res);
    });
  });
}

/** As `failure`, with request metadata. */
export async function failureMd<Req, Res>(method: UnaryMethod<Req, Res>, req: Req, md: grpc.Metadata): Promise<grpc.ServiceError> {
  try {
    await callMd(method, req, md);
  } catch (err) {
    return err as grpc.ServiceError;
  }
  throw new Error('the call succeeded but was expected to fail');
}

/** Metadata carrying `authorization: Bearer <token>`. */
export function bearer(token: string): grpc.Metadata {
  const md = new grpc.Metadata();
  md.set('authorization', `Bearer ${token}`);
  return md;
}

/** Runs a call expected to fail; returns the status error. */
export async function failure<Req, Res>(method: UnaryMethod<Req, Res>, req: Req): Promise<grpc.ServiceError> {
  try {
    await call(method, req);
  } catch (err) {
    return err as grpc.ServiceError;
  }
  throw new Error('the call succeeded but was expected to fail');
}

export interface TypedDetails {
  code: number;
  message: string;
  sequence?: SequenceDetail__Output;
  fence?: FenceDetail__Output;
  typeUrls: string[];
}

/** Unpacks google.rpc.Status from the trailers; undefined when the status carries none. */
export function detailsOf(err: { metadata?: grpc.Metadata }): TypedDetails | undefined {
  const raw = err.metadata?.get(STATUS_DETAILS_KEY)[0];
  if (raw === undefined) return undefined;
  const status = decodeRpcStatus(typeof raw === 'string' ? Buffer.from(raw, 'base64') : raw);
  const { sequenceDetail, fenceDetail } = loadSvcProto();
  const out: TypedDetails = { code: status.code, message: status.message, typeUrls: status.details.map((d) => d.type_url) };
  for (const d of status.details) {
    if (d.type_url.endsWith('/svc.v1.SequenceDetail')) out.sequence = sequenceDetail.deserialize(Buffer.from(d.value));
    if (d.type_url.endsWith('/svc.v1.FenceDetail')) out.fence = fenceDetail.deserialize(Buffer.from(d.value));
  }
  return out;
}

export const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');
