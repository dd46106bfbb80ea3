// Original file: proto/svc/v1/data.proto

import type { SequencedRecord as _svc_v1_SequencedRecord, SequencedRecord__Output as _svc_v1_SequencedRecord__Output } from '../../svc/v1/SequencedRecord.ts';
import type { Position as _svc_v1_Position, Position__Output as _svc_v1_Position__Output } from '../../svc/v1/Position.ts';

export interface ReadResponse {
  /**
   * One page, possibly empty (caught up). Never spans the settled frontier.
   */
  'records'?: (_svc_v1_SequencedRecord)[];
  /**
   * The committed tail as of the read.
   */
  'tail'?: (_svc_v1_Position | null);
}

export interface ReadResponse__Output {
  /**
   * One page, possibly empty (caught up). Never spans the settled frontier.
   */
  'records': (_svc_v1_SequencedRecord__Output)[];
  /**
   * The committed tail as of the read.
   */
  'tail': (_svc_v1_Position__Output | null);
}
