// A free loopback port below Linux's ephemeral range (32768+), for a star that must come back on the
// same port after a restart: clients reconnecting while it is down get ephemeral local ports, and one
// of them could otherwise be the star's own port (a loopback self-connect), which would then hold it.
import { createServer } from 'node:net';

const PORT_MIN = 20_000;
const PORT_SPAN = 12_000;
const PORT_TRIES_MAX = 50;

export async function freeLowPort(): Promise<number> {
  for (let i = 0; i < PORT_TRIES_MAX; i++) {
    const port = PORT_MIN + Math.floor(Math.random() * PORT_SPAN);
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen({ host: '127.0.0.1', port, exclusive: true }, () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error('no free port below the ephemeral range');
}
