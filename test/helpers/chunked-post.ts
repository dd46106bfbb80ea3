// A POST whose body goes out chunked (no Content-Length), one write per part with a pause between,
// so the server sees several chunks: what a streaming client sends.
import { request, type IncomingHttpHeaders } from 'node:http';

/** The pause between two parts' writes. */
const PART_PAUSE_MS = 50;

export interface ChunkedAnswer { status: number; headers: IncomingHttpHeaders; text: string }

/** Posts `parts` to `url`; `timeoutMs` bounds the wait for the answer (a hang fails the caller). */
export function postInParts(url: string, parts: string[], headers: Record<string, string>, timeoutMs: number): Promise<ChunkedAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent: false, timeout: timeoutMs, headers: { ...headers, 'transfer-encoding': 'chunked' } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => { text += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`POST ${url}: no answer in ${timeoutMs} ms (a hang)`)));
    req.on('error', reject);
    void (async () => {
      for (const part of parts) {
        req.write(part);
        await new Promise((r) => setTimeout(r, PART_PAUSE_MS));
      }
      req.end();
    })();
  });
}
