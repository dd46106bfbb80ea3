// A TCP proxy in the test's process between a star and the real PostgreSQL, to break the connections
// it holds in the ways a network does: wedge() silences them both ways (a peer gone without FIN or
// RST), deafen() passes what the star sends but drops what PostgreSQL answers (a statement runs, and
// commits, and its answer never arrives), reset() resets them (ECONNRESET). New connections pass.

import { createServer, connect, type Server, type Socket } from 'node:net';

interface Pair { client: Socket; upstream: Socket; wedged: boolean; deaf: boolean }

export class PostgresProxy {
  private readonly pairs = new Set<Pair>();
  private server: Server | undefined;
  port = 0;

  async start(target: URL): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(Number(target.port || 5432), target.hostname);
      const pair: Pair = { client, upstream, wedged: false, deaf: false };
      this.pairs.add(pair);
      client.on('data', (d) => { if (!pair.wedged) upstream.write(d); });
      upstream.on('data', (d) => { if (!pair.wedged && !pair.deaf) client.write(d); });
      const end = (): void => { client.destroy(); upstream.destroy(); this.pairs.delete(pair); };
      // A wedged connection stays open however its ends behave: the star must give it up itself.
      client.on('close', () => { if (!pair.wedged) end(); });
      upstream.on('close', () => { if (!pair.wedged) end(); });
      client.on('error', () => undefined);
      upstream.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const addr = this.server.address();
    this.port = typeof addr === 'object' && addr ? addr.port : 0;
  }

  /** `url` with its host replaced by this proxy's. */
  urlFor(url: URL): string {
    const through = new URL(url);
    through.host = `127.0.0.1:${this.port}`;
    return through.toString();
  }

  /** Resets every connection it holds (the star sees ECONNRESET). */
  reset(): void {
    for (const p of this.pairs) { p.client.resetAndDestroy(); p.upstream.destroy(); }
    this.pairs.clear();
  }

  /** Silences every connection it holds, both ways; answers how many. */
  wedge(): number {
    for (const p of this.pairs) p.wedged = true;
    return this.pairs.size;
  }

  /** Drops PostgreSQL's answers on every connection it holds, still passing the star's statements;
   *  answers how many. */
  deafen(): number {
    for (const p of this.pairs) p.deaf = true;
    return this.pairs.size;
  }

  close(): void {
    for (const p of this.pairs) { p.client.destroy(); p.upstream.destroy(); }
    this.server?.close();
  }
}
