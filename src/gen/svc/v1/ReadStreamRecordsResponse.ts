// Original file: proto/svc/v1/admin.proto

import type { SequencedRecord as _svc_v1_SequencedRecord, SequencedRecord__Output as _svc_v1_SequencedRecord__Output } from '../../svc/v1/SequencedRecord.ts';
import type { Position as _svc_v1_Position, Position__Output as _svc_v1_Position__Output } from '../../svc/v1/Position.ts';

export interface ReadStreamRecordsResponse {
  /**
   * The page.
   */
  'records'?: (_svc_v1_SequencedRecord)[];
  /**
   * Committed tail as of the read.
   */
  'tail'?: (_svc_v1_Position | null);
}

export interface ReadStreamRecordsResponse__Output {
  /**
   * The page.
   */
  'records': (_svc_v1_SequencedRecord__Output)[];
  /**
   * Committed tail as of the read.
   */
  'tail': (_svc_v1_Position__Output | null);
}
