// Cutting a list into consecutive runs bounded by bytes (and count): how the auditor groups the
// segments one settle-thread task checks, and how a cluster star groups the streams one settle task
// builds.

/** [start, end) of each run of `items`, in order: at most `countMax` items and `bytesMax` bytes by
 *  `bytesOf` each, except that an item larger than `bytesMax` makes a run of its own. */
export function runsOf<T>(items: readonly T[], bytesOf: (item: T) => number, bytesMax: number, countMax = Infinity): [number, number][] {
  const runs: [number, number][] = [];
  let start = 0;
  while (start < items.length) {
    let end = start + 1;
    let bytes = bytesOf(items[start]);
    while (end < items.length && end - start < countMax && bytes + bytesOf(items[end]) <= bytesMax) {
      bytes += bytesOf(items[end]);
      end += 1;
    }
    runs.push([start, end]);
    start = end;
  }
  return runs;
}
