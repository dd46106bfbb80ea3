// A real svcd child process serving the gRPC planes (--grpc-listen 127.0.0.1:0), found through the
// "svcd grpc listening on HOST:PORT" line, plus HS256 token minting for --auth jwt.
import { SignJWT } from 'jose';
import { removeDir, startServer, type RunningServer } from '../helpers/server.ts';
import { connect, type Clients } from './client.ts';

/** How long the child may take to print its gRPC line after its HTTP one. */
const GRPC_LINE_WAIT_MS = 5000;

export const JWT_SECRET = 'grpc-test-secret-of-at-least-32-bytes!!';

export interface GrpcChild extends Clients {
  server: RunningServer;
  grpcPort: number;
  stop(): Promise<void>;
}

export async function startGrpcChild(opts: { args?: string[]; jwt?: boolean } = {}): Promise<GrpcChild> {
  const args = ['--grpc-listen', '127.0.0.1:0', ...(opts.jwt ? ['--auth', 'jwt', '--insecure-auth'] : []), ...(opts.args ?? [])];
  const server = await startServer({ args, env: opts.jwt ? { SVCD_JWT_HMAC_SECRET: JWT_SECRET } : {} });
  // The gRPC line may follow the HTTP one: wait for it.
  const until = Date.now() + GRPC_LINE_WAIT_MS;
  let m: RegExpExecArray | null;
  while (!(m = /svcd grpc listening on [^\s:]+:(\d+)/.exec(server.output())) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 20));
  }
  if (!m) {
    await server.stop();
    throw new Error(`no grpc listening line:\n${server.output()}`);
  }
  const grpcPort = Number(m[1]);
  const clients = connect(grpcPort);
  return {
    ...clients,
    server,
    grpcPort,
    async stop() {
      clients.close();
      await server.stop();
      removeDir(server.dataDir);
    },
  };
}

/** An HS256 token with the given scope, living `ttlSeconds` (exp has one-second resolution). */
export async function mint(scope: string, ttlSeconds: number, aux?: Record<string, unknown>): Promise<string> {
  const jwt = new SignJWT({ scope, ...(aux ? { svc_aux: aux } : {}) })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject('grpc-test')
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds);
  return jwt.sign(Buffer.from(JWT_SECRET));
}
