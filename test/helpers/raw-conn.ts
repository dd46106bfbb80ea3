// A raw TCP connection to a star's HTTP port, collecting everything it sends: for tests of what
// HTTP clients cannot show (early answers, half-sent bodies, connection closes).
import { connect, type Socket } from 'node:net';

export interface RawConn {
  sock: Socket;
  /** Everything received so far, as latin1 text. */
  text(): string;
  closed(): boolean;
}

export async function rawConn(port: number): Promise<RawConn> {
  const sock = connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => { sock.once('connect', resolve); sock.once('error', reject); });
  let text = '';
  let closed = false;
  sock.on('data', (d: Buffer) => { text += d.toString('latin1'); });
  sock.on('close', () => { closed = true; });
  sock.on('error', () => { closed = true; });
  return { sock, text: () => text, closed: () => closed };
}
