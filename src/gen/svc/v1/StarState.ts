// Original file: proto/svc/v1/admin.proto

/**
 * Lifecycle of a star.
 */
export const StarState = {
  /**
   * Unknown.
   */
  STAR_STATE_UNSPECIFIED: 'STAR_STATE_UNSPECIFIED',
  /**
   * Serving and taking leases.
   */
  STAR_STATE_ACTIVE: 'STAR_STATE_ACTIVE',
  /**
   * Moving its leases away; takes no new ones.
   */
  STAR_STATE_DRAINING: 'STAR_STATE_DRAINING',
  /**
   * Drained and leaving the membership.
   */
  STAR_STATE_DECOMMISSIONING: 'STAR_STATE_DECOMMISSIONING',
} as const;

/**
 * Lifecycle of a star.
 */
export type StarState =
  /**
   * Unknown.
   */
  | 'STAR_STATE_UNSPECIFIED'
  | 0
  /**
   * Serving and taking leases.
   */
  | 'STAR_STATE_ACTIVE'
  | 1
  /**
   * Moving its leases away; takes no new ones.
   */
  | 'STAR_STATE_DRAINING'
  | 2
  /**
   * Drained and leaving the membership.
   */
  | 'STAR_STATE_DECOMMISSIONING'
  | 3

/**
 * Lifecycle of a star.
 */
export type StarState__Output = typeof StarState[keyof typeof StarState]
