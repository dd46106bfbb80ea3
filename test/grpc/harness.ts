// Starts the gRPC adapter over a StreamService on loopback and connects a client to it. Suites that
// hold for any correct core run once per backend: the in-memory fake and the real Star.
import { startGrpcServer, type GrpcServerOptions, type RunningGrpcServer } from '../../src/api/grpc/server.ts';
import type { StreamService } from '../../src/core/service-api.ts';
import { connect, type Clients } from './client.ts';
import { FakeService } from './fake-service.ts';
import { startRealStar } from './real-star.ts';

export interface Harness extends Clients {
  server: RunningGrpcServer;
  service: StreamService;
  stop(): Promise<void>;
}

export interface Backend {
  name: string;
  start(): Promise<{ service: StreamService; stop(): Promise<void> }>;
}

export const BACKENDS: readonly Backend[] = [
  { name: 'fake core', start: async () => ({ service: new FakeService(), stop: async () => {} }) },
  {
    name: 'real core',
    start: async () => {
      const real = await startRealStar();
      return { service: real.star, stop: () => real.stop() };
    },
  },
];

export async function startHarness(
  service: StreamService = new FakeService(),
  extra: Omit<GrpcServerOptions, 'service' | 'listen'> = {},
  stopService: () => Promise<void> = async () => {},
): Promise<Harness> {
  const server = await startGrpcServer({ service, listen: '127.0.0.1:0', ...extra });
  const clients = connect(server.port);
  return {
    ...clients,
    server,
    service,
    async stop() {
      clients.close();
      await server.close();
      await stopService();
    },
  };
}

export async function startHarnessOn(backend: Backend, extra: Omit<GrpcServerOptions, 'service' | 'listen'> = {}): Promise<Harness> {
  const b = await backend.start();
  return startHarness(b.service, extra, b.stop);
}
