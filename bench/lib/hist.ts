// hdr-histogram-js helpers. Every latency in the bench is recorded in whole microseconds, so a
// histogram can cross a process boundary as compressed base64 and be merged or read in the parent.
import * as hdr from 'hdr-histogram-js';

export type Histogram = hdr.Histogram;

/** Highest latency tracked, in µs (2 minutes): anything slower is a failure, not a sample. */
const LATENCY_US_MAX = 120_000_000;

export function newHistogram(): Histogram {
  return hdr.build({
    bitBucketSize: 32,
    autoResize: true,
    lowestDiscernibleValue: 1,
    highestTrackableValue: LATENCY_US_MAX,
    numberOfSignificantValueDigits: 3,
  });
}

/** Records a duration given in nanoseconds (bigint or number) as µs, at least 1. */
export function recordNs(h: Histogram, ns: number): void {
  const us = Math.round(ns / 1000);
  h.recordValue(us < 1 ? 1 : us > LATENCY_US_MAX ? LATENCY_US_MAX : us);
}

export function encodeHistogram(h: Histogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

export function decodeHistogram(b64: string): Histogram {
  return hdr.decodeFromCompressedBase64(b64, 32);
}

/** Value at a percentile, in milliseconds (the histogram holds µs). HdrHistogram answers the highest
 *  value equivalent to the sample at that rank (3 significant digits), which can sit above the exact
 *  maximum; a percentile is never reported above the largest sample itself. */
export function pctMs(h: Histogram, p: number): number {
  return h.totalCount === 0 ? NaN : Math.min(h.getValueAtPercentile(p), h.maxValue) / 1000;
}

export function maxMs(h: Histogram): number {
  return h.totalCount === 0 ? NaN : h.maxValue / 1000;
}
