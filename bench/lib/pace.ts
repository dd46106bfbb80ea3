// The send time a paced sender stamps on batch i: when it was due (start + i intervals), or when it
// actually went, if earlier. A sender that falls behind its pace (the SSE floor past what one
// thread can write, or a late timer in the bench process) then shows its backlog in the delays the
// swarm measures, instead of stamping each late batch when it finally goes.
export function dueStampNs(nowRelNs: number, startRelNs: number, i: number, intervalMs: number): number {
  return Math.min(nowRelNs, startRelNs + Math.round(i * intervalMs * 1e6));
}
