// Starts the gRPC adapter over the real Star (test/grpc/real-star.ts: fs objects, local metadata,
// the WAL flusher and the worker pool, composed as src/main.ts does) on loopback, and connects a
// real @grpc/grpc-js client to it.
import { join } from 'node:path';
import { startGrpcServer, type GrpcServerOptions, type RunningGrpcServer } from '../../src/api/grpc/server.ts';
import type { Star } from '../../src/core/star.ts';
import { connect, type Clients } from './client.ts';
import { startRealStar } from './real-star.ts';

export interface Harness extends Clients {
  server: RunningGrpcServer;
  star: Star;
  dataDir: string;
  objectsDir: string;
  stop(): Promise<void>;
}

export async function startHarness(extra: Omit<GrpcServerOptions, 'service' | 'listen'> = {}): Promise<Harness> {
  const real = await startRealStar();
  const objectsDir = join(real.dataDir, 'objects');
  const server = await startGrpcServer({
    service: real.star,
    listen: '127.0.0.1:0',
    vending: { mode: 'raw', ttlMs: 60_000, storageBucket: objectsDir },
    ...extra,
  });
  const clients = connect(server.port);
  return {
    ...clients,
    server,
    star: real.star,
    dataDir: real.dataDir,
    objectsDir,
    async stop() {
      clients.close();
      await server.close();
      await real.stop();
    },
  };
}
