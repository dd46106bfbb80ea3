// The Durable Streams surface under --auth jwt asks of a credential what the data plane's verbs would
// (spec, scope grammar): PUT creates (and appends when it carries data, and reads a fork's source),
// POST appends, DELETE deletes, GET reads. A credential pinning a fencing token cannot write
// through DS, which has no way to present one. And the credential's exp ends DS live reads as it
// ends /v1 subscriptions. Before, every DS write needed only `append`, a pinned credential wrote
// freely, and a 2 s token's long-poll or event stream delivered records appended after it expired.
import { strict as assert } from 'node:assert';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { mint, startGrpcChild, type GrpcChild } from '../grpc/child.ts';

/** Tokens that must expire during a test live this long (3-4 s: exp has one-second resolution), so
 *  one still reaches the star before it expires on a loaded machine. */
const SHORT_TTL_S = 4;
/** A body a caller without the grant announces: it must be refused from its head, none of it read. */
const ANNOUNCED_BODY_BYTES = 90 * 1024 * 1024;
/** A record appended this long after such a token's exp must not reach its live read. */
const AFTER_EXP_MS = 3000;

describe('DS authorization and expiry (jwt)', () => {
  let c: GrpcChild;
  let admin: string;
  const ds = (path: string, init: RequestInit, token: string): Promise<Response> =>
    fetch(`${c.server.baseUrl}/ds/v1/stream/${path}`, { ...init, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'text/plain', ...(init.headers ?? {}) } });
  const status = async (r: Promise<Response>): Promise<number> => { const res = await r; await res.arrayBuffer(); return res.status; };
  /** The svcd records of a DS stream (its meta record first), read with the admin token. */
  const records = async (key: string): Promise<number> => {
    const r = await fetch(`${c.server.baseUrl}/v1/streams/ds/${key}/records?seq_num=0`, { headers: { Authorization: `Bearer ${admin}` } });
    if (r.status === 404) { await r.arrayBuffer(); return -1; }
    assert.equal(r.status, 200);
    return ((await r.json()) as { records: unknown[] }).records.length;
  };

  before(async () => {
    c = await startGrpcChild({ jwt: true });
    admin = await mint('svc:admin', 600);
    assert.equal(await status(ds('base', { method: 'PUT', body: 'hello' }, admin)), 201);
  });
  after(async () => { await c?.stop(); });

  it('PUT needs create (and append with data), DELETE needs delete, POST append', async () => {
    const appendOnly = await mint('svc:append:ds:*', 600);
    assert.equal(await status(ds('a1', { method: 'PUT' }, appendOnly)), 403, 'append alone creates nothing');
    assert.equal(await records('a1'), -1);
    const createOnly = await mint('svc:create:ds:*', 600);
    assert.equal(await status(ds('a1', { method: 'PUT', body: 'data' }, createOnly)), 403, 'initial data is an append');
    assert.equal(await records('a1'), -1);
    assert.equal(await status(ds('a1', { method: 'PUT' }, createOnly)), 201);
    assert.equal(await status(ds('a1', { method: 'POST', body: 'more' }, createOnly)), 403);
    assert.equal(await status(ds('a1', { method: 'POST', body: 'more' }, appendOnly)), 204);
    assert.equal(await status(ds('a1', { method: 'DELETE' }, appendOnly)), 403, 'append deletes nothing');
    assert.equal(await records('a1'), 2, 'the meta record and the append');
    assert.equal(await status(ds('a1', { method: 'DELETE' }, await mint('svc:delete:ds:*', 600))), 204);
    assert.equal(await records('a1'), -1);
  });

  it('a caller without the grant is refused from its head: an announced 90 MiB body is never waited for', async () => {
    const reader = await mint('svc:read:ds:*', 600);
    const sock = connect(c.server.port, '127.0.0.1');
    try {
      const answer = new Promise<string>((resolve, reject) => {
        let text = '';
        sock.on('data', (d: Buffer) => { text += d.toString('latin1'); if (text.includes('\r\n\r\n')) resolve(text); });
        sock.on('error', reject);
        sock.on('close', () => resolve(text));
      });
      sock.write(`PUT /ds/v1/stream/big HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${reader}\r\nContent-Type: text/plain\r\nContent-Length: ${ANNOUNCED_BODY_BYTES}\r\n\r\n`);
      sock.write(Buffer.alloc(1024, 0x61)); // the body starts, and stops: only an answer from the head can come
      assert.match(await answer, /^HTTP\/1\.1 403/);
    } finally {
      sock.destroy();
    }
    assert.equal(await records('big'), -1);
  });

  it('a fork reads its source: without read on it, 403 and no fork', async () => {
    const creator = await mint('svc:create:ds:f*', 600);
    assert.equal(await status(ds('f1', { method: 'PUT', headers: { 'Stream-Forked-From': '/ds/v1/stream/base' } }, creator)), 403);
    assert.equal(await records('f1'), -1);
    const reader = await mint('svc:create:ds:f* svc:read:ds:base', 600);
    assert.equal(await status(ds('f1', { method: 'PUT', headers: { 'Stream-Forked-From': '/ds/v1/stream/base' } }, reader)), 201);
  });

  it('a credential pinning a fencing token writes nothing through DS', async () => {
    assert.equal(await status(ds('pin', { method: 'PUT', body: 'hello' }, admin)), 201);
    const pinned = await mint('svc:append:ds:* svc:create:ds:* svc:read:ds:*', 600, { fencing_token: 't1' });
    assert.equal(await status(ds('pin', { method: 'POST', body: ' world' }, pinned)), 403);
    assert.equal(await status(ds('p1', { method: 'PUT' }, pinned)), 403);
    assert.equal(await records('p1'), -1);
    assert.equal(await records('pin'), 2, 'the meta record and hello only');
    assert.equal(await status(ds('pin?offset=-1', { method: 'GET' }, pinned)), 200, 'reading is not an open');
  });

  it('a long-poll ends at the credential\'s exp: a record appended after it is not delivered', async () => {
    assert.equal(await status(ds('lp', { method: 'PUT' }, admin)), 201);
    const head = await ds('lp', { method: 'HEAD' }, admin);
    const tail = head.headers.get('stream-next-offset')!;
    const short = await mint('svc:read:ds:*', SHORT_TTL_S);
    const expMs = (Math.floor(Date.now() / 1000) + SHORT_TTL_S) * 1000;
    const late = setTimeout(() => { void ds('lp', { method: 'POST', body: 'after exp' }, admin).then((r) => r.arrayBuffer()); }, expMs + AFTER_EXP_MS - Date.now());
    try {
      const r = await ds(`lp?offset=${tail}&live=long-poll`, { method: 'GET' }, short);
      assert.equal(r.status, 204, await r.text());
    } finally {
      clearTimeout(late);
    }
  });

  it('a DS event stream ends at the credential\'s exp: a record appended after it is not delivered', async () => {
    assert.equal(await status(ds('ev', { method: 'PUT', body: 'before' }, admin)), 201);
    const short = await mint('svc:read:ds:*', SHORT_TTL_S);
    const expMs = (Math.floor(Date.now() / 1000) + SHORT_TTL_S) * 1000;
    const late = setTimeout(() => { void ds('ev', { method: 'POST', body: 'after exp' }, admin).then((r) => r.arrayBuffer()); }, expMs + AFTER_EXP_MS - Date.now());
    try {
      const r = await ds('ev?offset=-1&live=sse', { method: 'GET' }, short);
      assert.equal(r.status, 200);
      const text = await r.text(); // the stream's end, at exp
      assert.match(text, /data:before/);
      assert.doesNotMatch(text, /after exp/);
    } finally {
      clearTimeout(late);
    }
  });
});
