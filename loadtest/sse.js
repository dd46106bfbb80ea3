// @ts-check
// k6 (built with xk6-sse): the SSE scenarios of scenarios.json. Subscribers connect evenly over
// connectRamp; then a producer appends batchesPerS batches per second for `hold`; each subscriber
// measures delivery delay from the send time in the batch's first record (both ends read the same
// wall clock: same machine) and counts batches it missed. The Node runner (run.ts) plays the same file.
//   xk6 build --with github.com/phymbert/xk6-sse && ./k6 run -e BASE_URL=http://127.0.0.1:8080 loadtest/sse.js
import http from 'k6/http';
import { check, sleep } from 'k6';
import exec from 'k6/execution';
import { Counter, Rate, Trend } from 'k6/metrics';
import sse from 'k6/x/sse';
import { durationMs, schedule, sseBatchBody, sseBatches } from './lib/plan.js';

/** @type {import('./scenario-types.js').Scenarios} */
const SC = JSON.parse(open('./scenarios.json'));
const BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:8080';
const ONLY = (__ENV.ONLY || '').split(',').filter(Boolean);
const plan = schedule({ ...SC, append: [] }, ONLY);

const deliveryMs = new Trend('sse_delivery_ms', true);
const missedBatches = new Counter('sse_missed_batches');
const connectFailed = new Rate('sse_connect_failed');
const streamErrors = new Counter('sse_stream_errors');

/** @type {import('k6/options').Options['scenarios']} */
const scenarios = {};
/** @type {Record<string, string[]>} */
const thresholds = {};
for (const p of plan) {
  const s = SC.sse.find((x) => x.name === p.name);
  if (!s) continue;
  const ramp = durationMs(s.connectRamp);
  scenarios[`${s.name}_subscribers`] = {
    executor: 'per-vu-iterations',
    vus: s.subscribers,
    iterations: 1,
    startTime: `${p.startMs}ms`,
    maxDuration: `${p.durationMs + 10_000}ms`,
    exec: 'subscribe',
    env: { SSE_SCENARIO: s.name },
    tags: { sse_scenario: s.name },
  };
  scenarios[`${s.name}_producer`] = {
    executor: 'constant-arrival-rate',
    rate: s.batchesPerS,
    timeUnit: '1s',
    duration: s.hold,
    preAllocatedVUs: 4,
    maxVUs: 64,
    startTime: `${p.startMs + ramp}ms`,
    exec: 'produce',
    env: { SSE_SCENARIO: s.name },
    tags: { sse_scenario: s.name },
  };
  for (const [metric, exprs] of Object.entries(s.thresholds)) thresholds[`${metric}{sse_scenario:${s.name}}`] = exprs;
}

export const options = { scenarios, thresholds, summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(99)', 'p(99.9)', 'max'] };

const JSON_HEADERS = { headers: { 'Content-Type': 'application/json' } };

/** @returns {{ t0: number }} */
export function setup() {
  http.post(`${BASE_URL}/v1/buckets/${SC.bucket}`, '{}', JSON_HEADERS);
  for (const s of SC.sse) http.post(`${BASE_URL}/v1/streams/${SC.bucket}/${s.stream}`, '{}', JSON_HEADERS);
  return { t0: Date.now() };
}

function scenarioDef() {
  const s = SC.sse.find((x) => x.name === __ENV.SSE_SCENARIO);
  if (!s) throw new Error(`unknown SSE scenario ${__ENV.SSE_SCENARIO}`);
  return s;
}

/** @param {{ t0: number }} data */
export function subscribe(data) {
  const s = scenarioDef();
  const p = plan.find((x) => x.name === s.name);
  const ramp = durationMs(s.connectRamp);
  // Spread the connections over the ramp: VU n of N waits n/N of it.
  sleep(((exec.scenario.iterationInTest % s.subscribers) / s.subscribers) * (ramp / 1000));
  const endAt = data.t0 + (p ? p.startMs : 0) + ramp + durationMs(s.hold) + durationMs(s.grace);
  const tail = http.get(`${BASE_URL}/v1/streams/${SC.bucket}/${s.stream}/records/tail`);
  const start = tail.status === 200 ? /** @type {{ tail?: { seq_num: number }, seq_num?: number }} */ (tail.json()) : {};
  const seq = start.tail ? start.tail.seq_num : start.seq_num || 0;
  const expected = sseBatches(s);
  /** @type {Record<number, boolean>} */
  const seen = {};
  let received = 0;
  const res = sse.open(`${BASE_URL}/v1/streams/${SC.bucket}/${s.stream}/records/subscribe?seq_num=${seq}`, { method: 'GET', tags: { sse_scenario: s.name } }, (client) => {
    client.on('event', (ev) => {
      const now = Date.now();
      const frame = /** @type {{ records?: { body?: string }[] }} */ (JSON.parse(ev.data || '{}'));
      for (const r of frame.records || []) {
        if (!r.body || !r.body.startsWith(s.marker)) continue;
        const [idxS, sentS] = r.body.slice(s.marker.length).split(':');
        const idx = Number(idxS);
        if (seen[idx]) continue;
        seen[idx] = true;
        received++;
        deliveryMs.add(now - Number(sentS));
      }
      if (now >= endAt || received >= expected) client.close();
    });
    client.on('error', () => { streamErrors.add(1); client.close(); });
  });
  const ok = check(res, { 'subscribe 200': (r) => !!r && r.status === 200 });
  connectFailed.add(!ok);
  missedBatches.add(Math.max(0, expected - received));
}

export function produce() {
  const s = scenarioDef();
  const idx = exec.scenario.iterationInTest;
  const res = http.post(`${BASE_URL}/v1/streams/${SC.bucket}/${s.stream}/records`, sseBatchBody(s, idx, Date.now()), JSON_HEADERS);
  check(res, { 'append 200': (r) => r.status === 200 });
}
