// @ts-check
// k6: the append scenarios of scenarios.json, one after another (ramping-vus, closed loop: each VU
// appends again as soon as its ack arrives). The Node runner (run.ts) plays the same file.
//   k6 run -e BASE_URL=http://127.0.0.1:8080 loadtest/append.js
//   k6 run -e BASE_URL=… -e ONLY=append_single_100b loadtest/append.js
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { Counter } from 'k6/metrics';
import { appendBody, schedule } from './lib/plan.js';

/** @type {import('./scenario-types.js').Scenarios} */
const SC = JSON.parse(open('./scenarios.json'));
const BASE_URL = __ENV.BASE_URL || 'http://127.0.0.1:8080';
const ONLY = (__ENV.ONLY || '').split(',').filter(Boolean);
const plan = schedule({ ...SC, sse: [] }, ONLY);

const appendedRecords = new Counter('appended_records');

/** @type {Record<string, { url: string, body: string, records: number }>} */
const REQUESTS = {};
/** @type {import('k6/options').Options['scenarios']} */
const scenarios = {};
/** @type {Record<string, string[]>} */
const thresholds = {};
for (const p of plan) {
  const a = SC.append.find((x) => x.name === p.name);
  if (!a) continue;
  REQUESTS[a.name] = { url: `${BASE_URL}/v1/streams/${SC.bucket}/${a.stream}/records`, body: appendBody(a.recordBytes, a.recordsPerRequest), records: a.recordsPerRequest };
  scenarios[a.name] = {
    executor: 'ramping-vus',
    startVUs: 0,
    stages: a.stages,
    startTime: `${p.startMs}ms`,
    gracefulRampDown: '2s',
    gracefulStop: '2s',
    exec: 'append',
  };
  for (const [metric, exprs] of Object.entries(a.thresholds)) thresholds[`${metric}{scenario:${a.name}}`] = exprs;
}

export const options = {
  scenarios,
  thresholds,
  summaryTrendStats: ['avg', 'min', 'med', 'p(90)', 'p(99)', 'p(99.9)', 'max'],
  discardResponseBodies: false,
};

const JSON_HEADERS = { headers: { 'Content-Type': 'application/json' } };

export function setup() {
  http.post(`${BASE_URL}/v1/buckets/${SC.bucket}`, '{}', JSON_HEADERS);
  for (const p of plan) {
    const a = SC.append.find((x) => x.name === p.name);
    if (a) http.post(`${BASE_URL}/v1/streams/${SC.bucket}/${a.stream}`, '{}', JSON_HEADERS);
  }
}

export function append() {
  const r = REQUESTS[exec.scenario.name];
  const res = http.post(r.url, r.body, JSON_HEADERS);
  const ok = check(res, { 'append 200': (x) => x.status === 200 });
  if (ok) appendedRecords.add(r.records);
}
