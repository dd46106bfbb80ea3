// Original file: proto/svc/v1/errors.proto


/**
 * Sent with FAILED_PRECONDITION (message "NOT_OWNER: …") when the star called does not lead the
 * stream and another live star does: call that star instead (its gRPC address), or any star again
 * after a moment. The same three values ride the trailing metadata as `svcd-leader-star`,
 * `svcd-leader-grpc` and `svcd-leader-bridge` for clients that do not decode details. HTTP callers
 * never see it: the data bridge hops to the leader itself.
 */
export interface NotOwnerDetail {
  'star_id'?: (string);
  /**
   * host:port of the leader's gRPC listener.
   */
  'grpc_address'?: (string);
  /**
   * host:port of the leader's data bridge.
   */
  'bridge_address'?: (string);
}

/**
 * Sent with FAILED_PRECONDITION (message "NOT_OWNER: …") when the star called does not lead the
 * stream and another live star does: call that star instead (its gRPC address), or any star again
 * after a moment. The same three values ride the trailing metadata as `svcd-leader-star`,
 * `svcd-leader-grpc` and `svcd-leader-bridge` for clients that do not decode details. HTTP callers
 * never see it: the data bridge hops to the leader itself.
 */
export interface NotOwnerDetail__Output {
  'star_id': (string);
  /**
   * host:port of the leader's gRPC listener.
   */
  'grpc_address': (string);
  /**
   * host:port of the leader's data bridge.
   */
  'bridge_address': (string);
}
