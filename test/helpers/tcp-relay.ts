// A TCP relay in the test's process between stars and a dependency (PostgreSQL, s3rver), to break
// the connections as a network does. On the connections it holds: wedge() silences them both ways
// (a peer gone without FIN or RST), deafen() passes what the star sends but drops the answers (a
// statement runs, and commits, and its answer never arrives), reset() resets them (ECONNRESET); new
// connections still pass. cut('refuse') also closes the listener (new connects get ECONNREFUSED),
// cut('drop') wedges them and accepts new ones it never answers (a black hole); restore() lets new
// connections through again (the silenced ones stay silent, as a peer that vanished).
import { createServer, connect, type Server, type Socket } from 'node:net';

interface Pair { client: Socket; upstream: Socket | undefined; silent: boolean; deaf: boolean }

export class TcpRelay {
  private server: Server | undefined;
  private readonly pairs = new Set<Pair>();
  private cutMode: 'refuse' | 'drop' | undefined;
  port = 0;

  constructor(private readonly targetPort: number, private readonly targetHost = '127.0.0.1') {}

  /** A relay to the host and port of `url` (PostgreSQL's default port when it names none). */
  static toUrl(url: URL): TcpRelay {
    return new TcpRelay(Number(url.port || 5432), url.hostname);
  }

  /** Listens on `port` (0: any free one; restore() listens on the same one again). */
  async start(port = 0): Promise<void> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    const a = this.server.address();
    this.port = typeof a === 'object' && a ? a.port : 0;
  }

  /** `url` with its host replaced by this relay's. */
  urlFor(url: URL): string {
    const through = new URL(url);
    through.host = `127.0.0.1:${this.port}`;
    return through.toString();
  }

  private accept(client: Socket): void {
    const pair: Pair = { client, upstream: undefined, silent: this.cutMode === 'drop', deaf: false };
    this.pairs.add(pair);
    client.on('error', () => undefined);
    // A silenced connection stays open however its ends behave: the star must give it up itself,
    // and the dependency must not learn that it did (its session, and any lock it holds, lives on).
    const end = (): void => {
      if (pair.silent) return;
      client.destroy();
      pair.upstream?.destroy();
      this.pairs.delete(pair);
    };
    client.on('close', end);
    if (pair.silent) return;
    const upstream = connect(this.targetPort, this.targetHost);
    pair.upstream = upstream;
    upstream.on('error', () => undefined);
    upstream.on('close', end);
    client.on('data', (d) => { if (!pair.silent) upstream.write(d); });
    upstream.on('data', (d) => { if (!pair.silent && !pair.deaf) client.write(d); });
  }

  /** Resets every connection it holds (the star sees ECONNRESET); answers how many. */
  reset(): number {
    const n = this.pairs.size;
    for (const p of this.pairs) { p.client.resetAndDestroy(); p.upstream?.destroy(); }
    this.pairs.clear();
    return n;
  }

  /** Silences every connection it holds, both ways; answers how many. */
  wedge(): number {
    for (const p of this.pairs) p.silent = true;
    return this.pairs.size;
  }

  /** Drops the answers on every connection it holds, still passing what the star sends; answers
   *  how many. */
  deafen(): number {
    for (const p of this.pairs) p.deaf = true;
    return this.pairs.size;
  }

  async cut(mode: 'refuse' | 'drop'): Promise<void> {
    this.cutMode = mode;
    if (mode === 'drop') {
      this.wedge();
      return;
    }
    const closing = new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.reset();
    await closing;
  }

  async restore(): Promise<void> {
    const was = this.cutMode;
    this.cutMode = undefined;
    if (was === 'refuse') await this.start(this.port);
  }

  close(): void {
    for (const p of this.pairs) { p.client.destroy(); p.upstream?.destroy(); }
    this.pairs.clear();
    this.server?.close();
  }
}
