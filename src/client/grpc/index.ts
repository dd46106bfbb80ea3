// `svcd/client/grpc`: producer sessions and the credential admin verbs over gRPC (Node only).
export { GRPC_CALL_TIMEOUT_MS_DEFAULT, GRPC_MESSAGE_BYTES_MAX, GrpcClient, type Credential, type GrpcClientOptions } from './client.ts';
export { fromGrpcError } from './errors.ts';
export { AppendSession, toWireRecord } from './session.ts';
