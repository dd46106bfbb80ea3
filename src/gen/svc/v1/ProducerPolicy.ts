// Original file: proto/svc/v1/types.proto

/**
 * Who may append to a stream.
 */
export const ProducerPolicy = {
  /**
   * Not set: defer to the bucket default (create) or keep the current value (reconfigure).
   */
  PRODUCER_POLICY_UNSPECIFIED: 'PRODUCER_POLICY_UNSPECIFIED',
  /**
   * Any producer may append; a fencing token is honored when installed.
   */
  PRODUCER_POLICY_ANY: 'PRODUCER_POLICY_ANY',
  /**
   * Every open or append must present the installed fencing token.
   */
  PRODUCER_POLICY_FENCED: 'PRODUCER_POLICY_FENCED',
} as const;

/**
 * Who may append to a stream.
 */
export type ProducerPolicy =
  /**
   * Not set: defer to the bucket default (create) or keep the current value (reconfigure).
   */
  | 'PRODUCER_POLICY_UNSPECIFIED'
  | 0
  /**
   * Any producer may append; a fencing token is honored when installed.
   */
  | 'PRODUCER_POLICY_ANY'
  | 1
  /**
   * Every open or append must present the installed fencing token.
   */
  | 'PRODUCER_POLICY_FENCED'
  | 2

/**
 * Who may append to a stream.
 */
export type ProducerPolicy__Output = typeof ProducerPolicy[keyof typeof ProducerPolicy]
