// Answers the Gateway gives itself, in the standard error envelope (spec: Errors): 429 and 503 carry
// Retry-After: 1, 405 its Allow.

import type { ServerResponse } from 'node:http';
import { orInternal } from '../protocol/errors.ts';
import { httpStatusOf } from '../api/http-status.ts';

export type LogError = (msg: string, err?: unknown) => void;

export function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    // Part of another answer went out already: cutting the connection is the only honest signal left.
    res.destroy();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

export function fail(res: ServerResponse, err: unknown, log: LogError): void {
  const e = orInternal(err);
  if (e.code === 'internal') log('bug: gateway request failed', err);
  const status = httpStatusOf(e.code);
  const headers: Record<string, string> = status === 429 || status === 503 ? { 'Retry-After': '1' } : {};
  if (e.code === 'method_not_allowed' && e.detail.allow) headers.Allow = e.detail.allow.join(', ');
  answer(res, status, e.toBody(), headers);
}
