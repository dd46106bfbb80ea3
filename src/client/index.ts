// `svcd/client`: the typed HTTP client of svcd, for Node and browsers (fetch, streams, TextEncoder;
// no `node:` import). The gRPC producer session, which needs @grpc/grpc-js and Node, is
// `svcd/client/grpc`.

export {
  ADDRESS_SCHEME, AddressError, BUCKET_NAME_CHARS_MAX, KEY_BYTES_MAX, encodeKey, formatAddress, keyBytes, keyFromBytes,
  parseAddress, parseStreamAddress, type BucketAddress, type StreamAddress, type StreamKey, type SvcAddress,
} from './address.ts';
export { appendSafely, type AppendIo, type RetryEvent, type SafeAppendOptions, type SafeAppendResult } from './append.ts';
export { base64Decode, base64Encode, utf8DecodeLossy, utf8DecodeStrict, utf8Encode } from './bytes.ts';
export { AmbiguousAppendError, GRPC, SvcError, WIRE_CODE, isSvcError, kindOfGrpc, kindOfStatus, type ErrorKind } from './errors.ts';
export {
  LIST_PAGE_MAX, SvcClient, type AppendCallOptions, type CallOptions, type ClientOptions, type CreateOptions, type ExchangeRequest,
  type ListOptions, type TrimPoint,
} from './http/client.ts';
export { REQUEST_TIMEOUT_MS_DEFAULT, type FetchLike, type TokenProvider } from './http/transport.ts';
export {
  BATCH_BYTES_MAX_DEFAULT, BATCH_RECORDS_MAX_DEFAULT, BUFFER_BYTES_MAX_DEFAULT, INFLIGHT_BATCHES_MAX_DEFAULT, LINGER_MS_DEFAULT,
  Producer, type BatchSink, type ProducerOptions, type ProducerStats, type RecordAck, type Ticket,
} from './producer.ts';
export { READ_PAGE_RECORDS_DEFAULT, type ReadOptions, type ReadPage } from './reader.ts';
export { DEFAULT_RETRY, type RetryPolicy } from './retry.ts';
export {
  HEARTBEAT_SILENCE_MS_DEFAULT, Subscription, type SubscribeOptions, type SubscriptionBatch, type SubscriptionEvent,
} from './subscription.ts';
export { ExchangeTokenSource, REFRESH_BEFORE_EXP_MS_DEFAULT, type TokenSourceOptions } from './token.ts';
export type {
  AppendAck, AppendOptions, AppendRecord, BucketConfig, BucketInfo, ExchangedToken, HeaderInput, Page, Position, ProducerPolicy,
  ReadRecord, ReadStart, RecordHeader, StorageClass, StreamConfig, StreamDetail, StreamInfo, TimestampingMode,
} from './types.ts';
export { BUCKET_CONFIG_FIELDS, STREAM_CONFIG_FIELDS } from './types.ts';
