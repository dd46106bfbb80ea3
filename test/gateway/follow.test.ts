// The Gateway's leader follow and upstream failover against scripted stars (plain node:http servers),
// so each path is exercised deterministically: a 421 naming the leader is followed once with the same
// request (method, path, query, Authorization verbatim, body bytes, chunked too); a second 421 and a
// 421 naming no leader are 503 with Retry-After; a refused upstream is skipped; an event stream from
// the leader streams through; the caller never sees a 421. test/gateway/cluster.test.ts does the same
// against real stars.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { startGatewayChild, type Gateway } from './child.ts';
import { postInParts } from '../helpers/chunked-post.ts';

interface Seen { method: string; url: string; authorization?: string; follow?: string; hop?: string; body: string }

/** A scripted star on loopback: records what it saw and answers with `script`. */
async function fakeStar(script: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ address: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      seen.push({
        method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, body,
        follow: req.headers['svcd-follow-leader'] as string | undefined, hop: req.headers['svcd-hop'] as string | undefined,
      });
      script(req, res, body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { address: `127.0.0.1:${(server.address() as { port: number }).port}`, seen, server };
}

const misdirect = (leader: string | undefined) => (_req: IncomingMessage, res: ServerResponse): void => {
  res.writeHead(421, { 'content-type': 'application/json', ...(leader ? { 'svcd-leader': leader } : {}) });
  res.end('{"error":"another star leads this stream"}');
};

async function deadAddress(): Promise<string> {
  const s = createTcpServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return `127.0.0.1:${port}`;
}

/** How long a chunked POST through the Gateway may take to be answered (a bound on a hang). */
const CHUNKED_ANSWER_MS_MAX = 30_000;

describe('gateway: following the leader', () => {
  const servers: Server[] = [];
  const gateways: Gateway[] = [];
  let leader: Awaited<ReturnType<typeof fakeStar>>;
  let follower: Awaited<ReturnType<typeof fakeStar>>;
  let gw: Gateway;
  before(async () => {
    leader = await fakeStar((req, res, body) => {
      if (req.url?.includes('/subscribe')) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'svcd-leader': 'leak' });
        res.write('event: batch\ndata: {"n":1}\n\n');
        setTimeout(() => res.end('event: batch\ndata: {"n":2}\n\n'), 50);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ echoed: body }));
    });
    follower = await fakeStar(misdirect(leader.address));
    servers.push(leader.server, follower.server);
    // A dead star first and the follower next (repeated flag and a comma list): the follower names
    // the leader, which is in no upstream list.
    gw = await startGatewayChild(['--upstream', await deadAddress(), '--upstream', `${follower.address},${await deadAddress()}`]);
    gateways.push(gw);
  });
  after(async () => {
    for (const g of gateways) await g.stop();
    for (const s of servers) await new Promise<void>((r) => s.close(() => r()));
  });

  test('a 421 is followed once with the same request; a refused star is skipped; the caller never sees 421', async () => {
    for (let i = 0; i < 4; i++) {
      const auth = `Bearer tok.en-${i}`;
      const parts = [`{"records":[{"body":"part-${i}`, '-end"}]}'];
      const r = await postInParts(`${gw.url}/v1/streams/b/k${i}/records?x=1&y=%2F`, parts, { authorization: auth, 'svcd-hop': 'forged', 'content-type': 'application/json' }, CHUNKED_ANSWER_MS_MAX);
      assert.equal(r.status, 200, r.text);
      assert.equal(r.headers['svcd-leader'], undefined);
      assert.deepEqual(JSON.parse(r.text), { echoed: parts.join('') }, 'the leader got the same body bytes');
      const atLeader = leader.seen.at(-1)!;
      const atFollower = follower.seen.at(-1)!;
      for (const s of [atLeader, atFollower]) {
        assert.equal(s.method, 'POST');
        assert.equal(s.url, `/v1/streams/b/k${i}/records?x=1&y=%2F`);
        assert.equal(s.authorization, auth, 'the caller\'s Authorization, verbatim');
        assert.equal(s.follow, '1');
        assert.equal(s.hop, undefined, 'a caller cannot forge a hop');
        assert.equal(s.body, parts.join(''));
      }
    }
  });

  test('an event stream from the followed leader streams through', async () => {
    const r = await fetch(`${gw.url}/v1/streams/b/k/records/subscribe?seq_num=0`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /text\/event-stream/);
    assert.equal(r.headers.get('svcd-leader'), null, 'a star\'s routing headers stay inside');
    const text = await r.text();
    assert.match(text, /"n":1[\s\S]*"n":2/);
  });

  test('a second 421, or a 421 naming no leader, is 503 with Retry-After: 1', async () => {
    const moving = await fakeStar(misdirect(follower.address)); // the "leader" moved again
    const blank = await fakeStar(misdirect(undefined));
    servers.push(moving.server, blank.server);
    const first = await fakeStar(misdirect(moving.address));
    servers.push(first.server);
    for (const upstream of [first.address, blank.address]) {
      const g = await startGatewayChild(['--upstream', upstream]);
      gateways.push(g);
      const r = await fetch(`${g.url}/v1/streams/b/k/records`, { method: 'POST', body: '{"records":[{"body":"x"}]}' });
      assert.equal(r.status, 503, upstream);
      assert.equal(r.headers.get('retry-after'), '1');
      assert.equal(typeof ((await r.json()) as { error: unknown }).error, 'string');
    }
    assert.equal(moving.seen.length, 1, 'the leader is followed once, not chased');
  });
});
