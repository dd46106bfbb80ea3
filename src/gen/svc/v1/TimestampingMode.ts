// Original file: proto/svc/v1/types.proto

/**
 * How record timestamps are chosen.
 */
export const TimestampingMode = {
  /**
   * Not set: defer to the bucket default (create) or keep the current value (reconfigure).
   */
  TIMESTAMPING_MODE_UNSPECIFIED: 'TIMESTAMPING_MODE_UNSPECIFIED',
  /**
   * Use the client's timestamp when given, else the arrival time.
   */
  TIMESTAMPING_MODE_CLIENT_PREFER: 'TIMESTAMPING_MODE_CLIENT_PREFER',
  /**
   * Every record must carry a client timestamp.
   */
  TIMESTAMPING_MODE_CLIENT_REQUIRE: 'TIMESTAMPING_MODE_CLIENT_REQUIRE',
  /**
   * Always stamp the arrival time; client timestamps are ignored.
   */
  TIMESTAMPING_MODE_ARRIVAL: 'TIMESTAMPING_MODE_ARRIVAL',
} as const;

/**
 * How record timestamps are chosen.
 */
export type TimestampingMode =
  /**
   * Not set: defer to the bucket default (create) or keep the current value (reconfigure).
   */
  | 'TIMESTAMPING_MODE_UNSPECIFIED'
  | 0
  /**
   * Use the client's timestamp when given, else the arrival time.
   */
  | 'TIMESTAMPING_MODE_CLIENT_PREFER'
  | 1
  /**
   * Every record must carry a client timestamp.
   */
  | 'TIMESTAMPING_MODE_CLIENT_REQUIRE'
  | 2
  /**
   * Always stamp the arrival time; client timestamps are ignored.
   */
  | 'TIMESTAMPING_MODE_ARRIVAL'
  | 3

/**
 * How record timestamps are chosen.
 */
export type TimestampingMode__Output = typeof TimestampingMode[keyof typeof TimestampingMode]
