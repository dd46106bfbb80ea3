// @ts-check
// Shared by the k6 scripts and the Node runner (plain ES module, no k6 or node imports): durations,
// the sequential schedule of the scenarios, request bodies and threshold parsing.

/** @typedef {import('../scenario-types.js').Scenarios} Scenarios */
/** @typedef {import('../scenario-types.js').AppendScenario} AppendScenario */
/** @typedef {import('../scenario-types.js').SseScenario} SseScenario */
/** @typedef {import('../scenario-types.js').Stage} Stage */

/** Pause between two scenarios so one's tail does not overlap the next. */
export const GAP_MS = 2000;

const UNIT_MS = /** @type {Record<string, number>} */ ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 });

/**
 * k6 duration ("1m30s", "500ms") to milliseconds.
 * @param {string} d
 * @returns {number}
 */
export function durationMs(d) {
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let matched = '';
  for (let m = re.exec(d); m; m = re.exec(d)) { total += Number(m[1]) * UNIT_MS[m[2]]; matched += m[0]; }
  if (matched !== d) throw new Error(`bad duration ${d}`);
  return total;
}

/**
 * @param {Stage[]} stages
 * @returns {number}
 */
export function stagesMs(stages) {
  return stages.reduce((t, s) => t + durationMs(s.duration), 0);
}

/**
 * VUs wanted at t ms into a ramping-vus scenario (linear between stage targets, from 0).
 * @param {Stage[]} stages
 * @param {number} t
 * @returns {number}
 */
export function vusAt(stages, t) {
  let from = 0;
  let start = 0;
  for (const s of stages) {
    const d = durationMs(s.duration);
    if (t < start + d) return Math.round(from + ((s.target - from) * (t - start)) / d);
    from = s.target;
    start += d;
  }
  return 0;
}

/**
 * @param {AppendScenario} s
 * @returns {number}
 */
export function maxVus(s) {
  return Math.max(...s.stages.map((x) => x.target));
}

/**
 * Total time of an SSE scenario: connect ramp + hold + grace.
 * @param {SseScenario} s
 * @returns {number}
 */
export function sseMs(s) {
  return durationMs(s.connectRamp) + durationMs(s.hold) + durationMs(s.grace);
}

/**
 * The scenarios' start offsets, one after another in file order (append first, then SSE), each
 * followed by GAP_MS. Filtered by name when `only` is non-empty.
 * @param {Scenarios} sc
 * @param {string[]} [only]
 * @returns {{ kind: 'append' | 'sse', name: string, startMs: number, durationMs: number }[]}
 */
export function schedule(sc, only = []) {
  /** @type {{ kind: 'append' | 'sse', name: string, startMs: number, durationMs: number }[]} */
  const out = [];
  let t = 0;
  const pick = (/** @type {string} */ n) => only.length === 0 || only.includes(n);
  for (const a of sc.append) {
    if (!pick(a.name)) continue;
    const d = stagesMs(a.stages);
    out.push({ kind: 'append', name: a.name, startMs: t, durationMs: d });
    t += d + GAP_MS;
  }
  for (const s of sc.sse) {
    if (!pick(s.name)) continue;
    const d = sseMs(s);
    out.push({ kind: 'sse', name: s.name, startMs: t, durationMs: d });
    t += d + GAP_MS;
  }
  return out;
}

/**
 * `{"records":[{"body":"xxx…"},…]}`.
 * @param {number} recordBytes
 * @param {number} n
 * @returns {string}
 */
export function appendBody(recordBytes, n) {
  const rec = JSON.stringify({ body: 'x'.repeat(recordBytes) });
  return `{"records":[${Array.from({ length: n }, () => rec).join(',')}]}`;
}

/**
 * An SSE batch: the first record starts with `${marker}${idx}:${sendTime}:`, all records are
 * recordBytes long.
 * @param {SseScenario} s
 * @param {number} idx
 * @param {number} sendTime
 * @returns {string}
 */
export function sseBatchBody(s, idx, sendTime) {
  const first = `${s.marker}${idx}:${sendTime}:`;
  const records = [JSON.stringify({ body: first + 'x'.repeat(Math.max(0, s.recordBytes - first.length)) })];
  const rest = JSON.stringify({ body: 'x'.repeat(s.recordBytes) });
  for (let i = 1; i < s.recordsPerBatch; i++) records.push(rest);
  return `{"records":[${records.join(',')}]}`;
}

/**
 * Batches the producer sends in an SSE scenario.
 * @param {SseScenario} s
 * @returns {number}
 */
export function sseBatches(s) {
  return Math.round((durationMs(s.hold) / 1000) * s.batchesPerS);
}

/**
 * A k6 threshold expression, parsed: aggregation ("p(99)", "rate", "count", "avg", "med", "min",
 * "max"), comparison and bound.
 * @param {string} expr
 * @returns {{ agg: string, op: string, bound: number }}
 */
export function parseThreshold(expr) {
  const m = /^\s*(p\(\d+(?:\.\d+)?\)|rate|count|avg|med|min|max)\s*(<=|>=|===|==|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/.exec(expr);
  if (!m) throw new Error(`unsupported threshold ${expr}`);
  return { agg: m[1], op: m[2], bound: Number(m[3]) };
}

/**
 * @param {number} value
 * @param {string} op
 * @param {number} bound
 * @returns {boolean}
 */
export function compare(value, op, bound) {
  switch (op) {
    case '<': return value < bound;
    case '<=': return value <= bound;
    case '>': return value > bound;
    case '>=': return value >= bound;
    case '==': case '===': return value === bound;
    case '!=': return value !== bound;
    default: throw new Error(`bad operator ${op}`);
  }
}
