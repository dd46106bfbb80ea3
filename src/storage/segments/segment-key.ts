// Where a settled segment lives in object storage.

/** One object per stream range, named by its first and end seq_num. A range's records are committed
 *  once and never change, so two uploads under one name carry the same bytes: re-settling after a
 *  crash overwrites it harmlessly, and a stale leader's late upload of a shorter range starting at
 *  the same record cannot replace the new leader's segment (named by its first seq_num alone, it did:
 *  test/sim/stale-leader.test.ts). */
export function segmentKey(streamId: string, firstSeq: number, endSeq: number): string {
  return `streams/${streamId}/${String(firstSeq).padStart(20, '0')}-${String(endSeq).padStart(20, '0')}.seg`;
}
