// svcd's read-only dashboard: a hash router over six pages (Overview, Streams, Stream detail with a
// record reader, Buckets, Audits, Credentials), each built from the admin bridge's answers
// (POST api/{Method}, JSON shaped as the proto messages of proto/svc/v1/admin.proto).
// Every value is rendered as text (text nodes and attributes); nothing is ever parsed as markup, and
// links are built from fixed page names plus URL-encoded parameters behind '#'.
/* global document, window, location, URLSearchParams, Node */

const main = document.getElementById('main');
const PAGE_SIZE = 100;
const READER_RECORDS_MAX = 500;

// ---- the bridge ---------------------------------------------------------------------------------

async function api(method, body = {}) {
  const res = await fetch(`api/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  let data = {};
  try {
    data = await res.json();
  } catch {
    // not JSON: the status line says enough
  }
  if (!res.ok) {
    const why = data && typeof data.error === 'string' ? data.error : res.statusText;
    throw new Error(`${method} answered ${res.status}: ${why}`);
  }
  return data;
}

// ---- building blocks (text only) ----------------------------------------------------------------

/** An element with attributes and children; strings become text nodes, never markup. */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value);
    else el.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** '#/page?a=b': fixed page names, parameters URL-encoded. */
function link(page, params = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return `#/${page}${s ? `?${s}` : ''}`;
}

const count = (n, capped) => (capped ? `${n}+` : String(n));
const time = (ms) => (ms ? new Date(ms).toISOString().replace('T', ' ').replace('Z', ' UTC') : '—');
const enumName = (v, prefix) => (typeof v === 'string' ? v.replace(prefix, '').toLowerCase() : String(v));

function duration(ms) {
  const s = Math.floor(ms / 1000);
  const parts = [[Math.floor(s / 86400), 'd'], [Math.floor((s % 86400) / 3600), 'h'], [Math.floor((s % 3600) / 60), 'm'], [s % 60, 's']];
  const shown = parts.filter(([n]) => n > 0).map(([n, u]) => `${n}${u}`);
  return shown.length ? shown.join(' ') : '0s';
}

/** A bytes field by the read encoding: its plain name when UTF-8, else `<name>_b64`. */
function bytesCell(obj, name, asPre) {
  if (typeof obj[name] === 'string') return asPre ? h('pre', {}, obj[name]) : obj[name];
  const b64 = obj[`${name}_b64`];
  if (typeof b64 !== 'string') return '';
  return h('span', {}, h('span', { class: 'tag' }, 'base64'), asPre ? h('pre', {}, b64) : b64);
}

/** The request fields naming a stream key, from an answer or from the page's parameters. */
const keyFields = (o) => (typeof o.key === 'string' ? { key: o.key } : { key_b64: o.key_b64 ?? '' });
const keyFromParams = (p) => (p.has('key_b64') ? { key_b64: p.get('key_b64') } : { key: p.get('key') ?? '' });

function leadership(leaderStarId) {
  return leaderStarId
    ? h('span', { class: 'lease-leased', title: `led by ${leaderStarId}` }, 'leased')
    : h('span', { class: 'lease-idle' }, 'idle');
}

function table(headers, rows, emptyText) {
  if (!rows.length) return h('p', { class: 'muted' }, emptyText);
  return h('table', {},
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', {}, x)))),
    h('tbody', {}, rows.map((cells) => h('tr', {}, cells.map((c) => h('td', {}, c))))));
}

function kv(pairs) {
  return h('dl', { class: 'kv' }, pairs.flatMap(([k, v, field]) => [h('dt', {}, k), h('dd', { 'data-field': field }, v)]));
}

function errorBox(err) {
  return h('p', { class: 'error', role: 'alert' }, err instanceof Error ? err.message : String(err));
}

/** First-page and next-page links of a cursor-paged list. */
function pager(page, params, after, next) {
  return h('p', { class: 'pager' },
    after ? h('a', { href: link(page, params), 'data-pager': 'first' }, '⏮ First page') : null,
    next ? h('a', { href: link(page, { ...params, after: next }), 'data-pager': 'next' }, 'Next page ⏭') : null);
}

function pageSize(params, max) {
  const n = Number(params.get('limit'));
  return Number.isInteger(n) && n > 0 ? Math.min(n, max) : Math.min(PAGE_SIZE, max);
}

// ---- pages ------------------------------------------------------------------------------------

async function overview() {
  const [health, stars, o] = await Promise.all([api('Health'), api('ListStars'), api('GetClusterOverview')]);
  return h('section', {},
    h('h2', {}, 'Overview'),
    kv([
      ['Answering star', health.star_id, 'star'],
      ['Serving', health.serving ? 'yes' : 'no', 'serving'],
      ['Uptime', duration(health.uptime_ms), 'uptime'],
      ['Stars', String(o.star_count), 'stars'],
      ['Buckets', count(o.bucket_count, o.bucket_count_capped), 'buckets'],
      ['Streams', count(o.stream_count, o.stream_count_capped), 'streams'],
    ]),
    h('h3', {}, 'Stars'),
    table(['Star', 'gRPC address', 'State', 'Started'],
      stars.stars.map((s) => [s.star_id, s.address || '—', enumName(s.state, 'STAR_STATE_'), time(s.started_at_unix_ms)]),
      'No stars.'));
}

function bucketForm(bucket) {
  const input = h('input', { name: 'bucket', value: bucket, placeholder: 'bucket name', required: true, 'aria-label': 'bucket' });
  return h('form', {
    class: 'inline',
    onsubmit: (ev) => {
      ev.preventDefault();
      location.hash = link('streams', { bucket: input.value.trim() });
    },
  }, h('label', {}, 'Bucket', input), h('button', { type: 'submit' }, 'Show streams'));
}

async function streams(params) {
  const bucket = params.get('bucket') ?? '';
  if (!bucket) {
    const b = await api('ListBucketSummaries', { limit: PAGE_SIZE });
    return h('section', {},
      h('h2', {}, 'Streams'),
      bucketForm(''),
      h('p', { class: 'muted' }, 'Pick a bucket:'),
      table(['Bucket', 'Streams'],
        b.buckets.map((x) => [h('a', { href: link('streams', { bucket: x.info.name }) }, x.info.name), count(x.stream_count, x.stream_count_capped)]),
        'No buckets.'),
      b.next ? h('p', { class: 'muted' }, 'More buckets: see the Buckets page.') : null);
  }
  const after = params.get('after') ?? '';
  const limit = pageSize(params, 1000);
  const page = await api('ListStreamSummaries', { bucket, start_after: after, limit });
  return h('section', {},
    h('h2', {}, 'Streams in ', h('code', {}, bucket)),
    bucketForm(bucket),
    table(['Key', 'Stream id', 'Class', 'Tail seq_num', 'Last record', 'Leadership', 'Created'],
      page.streams.map((s) => [
        h('a', { href: link('stream', { bucket: s.bucket, ...keyFields(s) }), 'data-stream-key': s.key ?? s.key_b64 }, bytesCell(s, 'key', false)),
        s.stream_id,
        enumName(s.storage_class, 'STORAGE_CLASS_'),
        String(s.tail.seq_num),
        time(s.tail.timestamp_ms),
        leadership(s.leader_star_id),
        time(s.created_at_unix_ms),
      ]),
      after ? 'No more streams.' : 'No streams in this bucket.'),
    pager('streams', { bucket, limit: params.get('limit') }, after, page.next));
}

function readerSection(address) {
  const seq = h('input', { name: 'seq_num', type: 'number', min: 0, step: 1, value: 0, 'aria-label': 'seq_num' });
  const limit = h('input', { name: 'limit', type: 'number', min: 1, max: READER_RECORDS_MAX, step: 1, value: PAGE_SIZE, 'aria-label': 'limit' });
  const out = h('div', { id: 'records' });
  const read = async () => {
    out.replaceChildren(h('p', { class: 'muted' }, 'Reading…'));
    try {
      const page = await api('ReadStreamRecords', { ...address, seq_num: Number(seq.value) || 0, limit: Number(limit.value) || 0 });
      const recs = page.records;
      const last = recs.length ? recs[recs.length - 1].seq_num : undefined;
      const more = last !== undefined && last + 1 < page.tail.seq_num;
      out.replaceChildren(
        h('p', { class: 'muted', 'data-field': 'reader-summary' },
          recs.length
            ? `${recs.length} records, seq_num ${recs[0].seq_num} to ${last}; tail ${page.tail.seq_num}`
            : `No records from here; tail ${page.tail.seq_num}`),
        table(['seq_num', 'Timestamp', 'Headers', 'Body'],
          recs.map((r) => [
            String(r.seq_num),
            time(r.timestamp_ms),
            (r.headers || []).map((x) => h('div', {}, bytesCell(x, 'name', false), ': ', bytesCell(x, 'value', false))),
            bytesCell(r, 'body', true),
          ]),
          ''),
        more ? h('button', {
          type: 'button',
          'data-reader': 'next',
          onclick: () => { seq.value = String(last + 1); void read(); },
        }, 'Next records') : null);
    } catch (err) {
      out.replaceChildren(errorBox(err));
    }
  };
  const form = h('form', { class: 'inline', onsubmit: (ev) => { ev.preventDefault(); void read(); } },
    h('label', {}, 'From seq_num', seq),
    h('label', {}, `Records (at most ${READER_RECORDS_MAX}; a page also stops at 1 MiB)`, limit),
    h('button', { type: 'submit' }, 'Read'));
  return h('section', {}, h('h3', {}, 'Records'), form, out);
}

async function stream(params) {
  const bucket = params.get('bucket') ?? '';
  const address = { bucket, ...keyFromParams(params) };
  const [d, live] = await Promise.all([api('GetStreamDetail', address), api('GetStreamLiveStats', address)]);
  const c = d.info.config;
  return h('section', {},
    h('h2', {}, 'Stream ', h('code', {}, bucket), ' / ', h('code', {}, bytesCell(d.info, 'key', false))),
    h('p', {}, h('a', { href: link('streams', { bucket }) }, `← streams in ${bucket}`)),
    kv([
      ['Stream id', d.info.stream_id, 'stream_id'],
      ['Storage class', enumName(c.storage_class, 'STORAGE_CLASS_'), 'class'],
      ['Producer policy', enumName(c.producer_policy, 'PRODUCER_POLICY_'), 'policy'],
      ['Timestamping', `${enumName(c.timestamping_mode, 'TIMESTAMPING_MODE_')}${c.timestamping_uncapped ? ', uncapped' : ''}`, 'timestamping'],
      ['Retention', `${c.retention_max_age_ms ? `${c.retention_max_age_ms} ms` : 'no age limit'}, ${c.retention_max_bytes ? `${c.retention_max_bytes} bytes` : 'no size limit'}`, 'retention'],
      ['Created', time(d.info.created_at_unix_ms), 'created'],
      ['Fencing token', d.fencing_token === '' ? 'none' : d.fencing_token, 'fencing_token'],
      ['Tail seq_num', String(live.tail.seq_num), 'tail'],
      ['Last record', time(live.tail.timestamp_ms), 'tail_time'],
      ['Leadership', leadership(live.leader_star_id), 'leadership'],
      ['Sampled', time(live.sampled_at_unix_ms), 'sampled'],
    ]),
    readerSection(address));
}

async function buckets(params) {
  const after = params.get('after') ?? '';
  const limit = pageSize(params, 100);
  const page = await api('ListBucketSummaries', { start_after: after, limit });
  return h('section', {},
    h('h2', {}, 'Buckets'),
    table(['Bucket', 'Streams', 'Default class', 'Create on append', 'Create on read', 'Created'],
      page.buckets.map((b) => [
        h('a', { href: link('streams', { bucket: b.info.name }) }, b.info.name),
        count(b.stream_count, b.stream_count_capped),
        enumName(b.info.config.default_stream_config.storage_class, 'STORAGE_CLASS_'),
        b.info.config.create_stream_on_append ? 'yes' : 'no',
        b.info.config.create_stream_on_read ? 'yes' : 'no',
        time(b.info.created_at_unix_ms),
      ]),
      after ? 'No more buckets.' : 'No buckets.'),
    pager('buckets', { limit: params.get('limit') }, after, page.next));
}

async function audits(params) {
  const queue = params.get('queue');
  const { queues } = await api('ListAuditQueues');
  const list = table(['Queue', 'Depth'],
    queues.map((q) => [h('a', { href: link('audits', { queue: q.name }) }, q.name), count(q.depth, q.depth_capped)]),
    'No audit queues: no auditor runs on this star.');
  let peek = null;
  if (queue !== null) {
    try {
      const { items } = await api('PeekAuditQueue', { name: queue, limit: PAGE_SIZE });
      peek = table(['Bucket', 'Key', 'Reason', 'Enqueued'],
        items.map((i) => [i.bucket, bytesCell(i, 'key', false), i.reason, time(i.enqueued_at_unix_ms)]), 'The queue is empty.');
    } catch (err) {
      peek = errorBox(err);
    }
  }
  return h('section', {}, h('h2', {}, 'Audits'), list, queue !== null ? h('h3', {}, 'Head of ', h('code', {}, queue)) : null, peek);
}

async function credentials(params) {
  const after = params.get('after') ?? '';
  const limit = pageSize(params, 1000);
  const page = await api('ListCredentials', { start_after: after, limit });
  return h('section', {},
    h('h2', {}, 'Credentials'),
    h('p', { class: 'muted' }, 'Api-key credentials, without secrets or hashes.'),
    table(['Key id', 'Scope', 'State', 'Created'],
      page.credentials.map((x) => [x.key_id, x.scope, enumName(x.state, 'CREDENTIAL_STATE_'), time(x.created_at_unix_ms)]),
      after ? 'No more credentials.' : 'No credentials.'),
    pager('credentials', { limit: params.get('limit') }, after, page.next));
}

const PAGES = { overview, streams, stream, buckets, audits, credentials };
/** The nav entry a page belongs to. */
const NAV_OF = { stream: 'streams' };

// ---- router -----------------------------------------------------------------------------------

let generation = 0;

async function render() {
  const mine = ++generation;
  const hash = location.hash;
  const raw = hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const name = (q < 0 ? raw : raw.slice(0, q)) || 'overview';
  const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  const page = Object.hasOwn(PAGES, name) ? PAGES[name] : null;
  for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.page === (NAV_OF[name] ?? name));
  main.removeAttribute('data-page');
  main.removeAttribute('data-rendered');
  main.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  let content;
  try {
    content = page ? await page(params) : h('p', { class: 'error' }, `No page ${name}.`);
  } catch (err) {
    content = errorBox(err);
  }
  if (mine !== generation) return; // a later navigation won
  main.replaceChildren(content);
  // Rendered: tests and tools wait for these.
  main.setAttribute('data-page', name);
  main.setAttribute('data-rendered', hash);
  document.title = `svcd admin: ${name}`;
}

window.addEventListener('hashchange', () => { void render(); });
void render();
