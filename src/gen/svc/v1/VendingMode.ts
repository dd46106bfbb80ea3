// Original file: proto/svc/v1/data.proto

/**
 * How plan entries locate their objects.
 */
export const VendingMode = {
  /**
   * The star's configured mode (`--readplan-vending`, presigned by default).
   */
  VENDING_MODE_UNSPECIFIED: 'VENDING_MODE_UNSPECIFIED',
  /**
   * Short-lived URLs signed by the star; safe per tenant.
   */
  VENDING_MODE_PRESIGNED: 'VENDING_MODE_PRESIGNED',
  /**
   * Storage bucket and object key; the consumer fetches under its own storage identity.
   * Trust-domain consumers only.
   */
  VENDING_MODE_RAW: 'VENDING_MODE_RAW',
} as const;

/**
 * How plan entries locate their objects.
 */
export type VendingMode =
  /**
   * The star's configured mode (`--readplan-vending`, presigned by default).
   */
  | 'VENDING_MODE_UNSPECIFIED'
  | 0
  /**
   * Short-lived URLs signed by the star; safe per tenant.
   */
  | 'VENDING_MODE_PRESIGNED'
  | 1
  /**
   * Storage bucket and object key; the consumer fetches under its own storage identity.
   * Trust-domain consumers only.
   */
  | 'VENDING_MODE_RAW'
  | 2

/**
 * How plan entries locate their objects.
 */
export type VendingMode__Output = typeof VendingMode[keyof typeof VendingMode]
