// Ports for tests that need an address nothing answers on (a dead upstream, a dependency that comes
// up late on a port chosen beforehand).
import { createServer, type AddressInfo } from 'node:net';

/** A loopback port that was free a moment ago and that nothing listens on now. */
export async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}
