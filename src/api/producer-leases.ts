// Stream leadership as a one-star deployment shows it (spec: States, "Stream leadership"): a stream
// is leased while a producer is live on it, and vacant (the dashboard's "idle") otherwise. A live
// producer is an append in flight (HTTP or gRPC) or an open AppendSession, which watches its stream
// for fence / reconfigure / delete events for as long as it is open.
//
// The counts are taken by decorating the service's `append` and `watch` in place, once per service
// (every transport holds the same Star and calls these methods at call time, so all of them are
// seen). Whatever started before the decoration is neither counted nor uncounted, so counts stay
// balanced. A cluster star would read its lease table instead.

import type { StreamService } from '../core/service-api.ts';

export interface Leadership {
  /** True while a producer is live on (bucket, key). */
  leased(bucket: string, key: string): boolean;
}

const tracked = new WeakMap<StreamService, Leadership>();

/** The leadership view of `svc`; the first call installs the counting. */
export function producerLeases(svc: StreamService): Leadership {
  let view = tracked.get(svc);
  if (!view) {
    view = track(svc);
    tracked.set(svc, view);
  }
  return view;
}

/** Bucket names never hold '/', so the pair is unambiguous. */
const addressOf = (bucket: string, key: string): string => `${bucket}/${key}`;

function track(svc: StreamService): Leadership {
  const live = new Map<string, number>();
  const up = (a: string): void => { live.set(a, (live.get(a) ?? 0) + 1); };
  const down = (a: string): void => {
    const n = (live.get(a) ?? 0) - 1;
    if (n > 0) live.set(a, n);
    else live.delete(a);
  };

  const append = svc.append.bind(svc);
  svc.append = (bucket, key, input) => {
    const a = addressOf(bucket, key);
    up(a);
    let p: ReturnType<StreamService['append']>;
    try {
      p = append(bucket, key, input);
    } catch (err) {
      down(a);
      throw err;
    }
    const done = (): void => down(a);
    p.then(done, done);
    return p; // the caller's promise, untouched: same settling, same rejection handling
  };

  const watch = svc.watch.bind(svc);
  svc.watch = (bucket, key, listener) => {
    const unwatch = watch(bucket, key, listener); // a missing stream throws here: nothing counted
    const a = addressOf(bucket, key);
    up(a);
    let watching = true;
    return () => {
      unwatch();
      if (watching) {
        watching = false;
        down(a);
      }
    };
  };

  return { leased: (bucket, key) => live.has(addressOf(bucket, key)) };
}
