// The gRPC adapter's public face: what main.ts and other modules import.
export { startGrpcServer, GRPC_MESSAGE_BYTES_MAX, type GrpcServerOptions, type RunningGrpcServer } from './server.ts';
export type {
  CredentialRow, GrpcAuthHooks, GrpcAuthRequest, GrpcCaller, GrpcStarHooks, IssuedToken, ReadPlanVending, TokenExchangeRequest,
} from './hooks.ts';
export { decodeRpcStatus, encodeRpcStatus, STATUS_DETAILS_KEY, type RpcStatus } from './rpc-status.ts';
export { FENCE_DETAIL_TYPE_URL, SEQUENCE_DETAIL_TYPE_URL } from './status-mapping.ts';
export { APPEND_SESSION_INFLIGHT_BYTES_MAX } from '../../config/limits.ts';
export { loadSvcProto, LOADER_OPTIONS, PROTO_ROOT } from './proto.ts';
