// Shared by the admin bridge and dashboard tests: a real star with the ops listener (and gRPC), the
// ports it printed, a bridge caller, and setup over the data bridge.
import assert from 'node:assert/strict';
import { startServer, waitForOutput, type RunningServer, type StartOptions } from '../helpers/server.ts';

export interface OpsStar {
  srv: RunningServer;
  /** http://127.0.0.1:PORT of the ops listener. */
  ops: string;
  /** The gRPC port, when --grpc-listen was given. */
  grpcPort?: number;
  stop(): Promise<void>;
}

export async function startOpsStar(opts: StartOptions & { grpc?: boolean } = {}): Promise<OpsStar> {
  // --lease-idle-ms 0: a stream is leased only while a producer is live, so tests see idle at once.
  const args = ['--metrics-listen', '127.0.0.1:0', '--lease-idle-ms', '0', ...(opts.grpc ? ['--grpc-listen', '127.0.0.1:0'] : []), ...(opts.args ?? [])];
  const srv = await startServer({ ...opts, args });
  try {
    const ops = `http://127.0.0.1:${(await waitForOutput(srv, /svcd ops on http:\/\/127\.0\.0\.1:(\d+)/))[1]}`;
    const grpcPort = opts.grpc ? Number((await waitForOutput(srv, /svcd grpc listening on 127\.0\.0\.1:(\d+)/))[1]) : undefined;
    return { srv, ops, grpcPort, stop: () => srv.stop() };
  } catch (err) {
    await srv.stop();
    throw err;
  }
}

export interface BridgeAnswer {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

/** POST /admin/api/{method}; `body` is sent as is when a string, else as JSON. */
export async function bridge(ops: string, method: string, body: unknown = {}, init: RequestInit = {}): Promise<BridgeAnswer> {
  const res = await fetch(`${ops}/admin/api/${method}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A bridge call expected to answer 200; answers its JSON. */
export async function ok(ops: string, method: string, body: unknown = {}): Promise<any> {
  const a = await bridge(ops, method, body);
  assert.equal(a.status, 200, `${method}: ${a.text}`);
  assert.match(a.headers.get('content-type') ?? '', /application\/json/);
  return a.json;
}

/** A data-bridge call expected to succeed. */
export async function data(srv: RunningServer, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(srv.baseUrl + path, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  assert.ok(res.ok, `${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

/** Runs `fn` over `items`, `width` at a time. */
export async function inParallel<T>(items: T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}
