// How long one large gRPC Append holds up everyone else's acks: a producer appends one 100 B record
// at a time over gRPC (closed loop) while another sends Appends of many small records and headers
// (within every cap), one after another. Prints the small producer's ack latency with and without
// the large ones, and how long each large Append took. Against one real svcd child (fs backend,
// fresh data dir); compare builds by running this in each (bench/README.md, stop 46).
//
//   npx tsx bench/grpc-decode-stall.ts          (about 25 s)
import * as grpc from '@grpc/grpc-js';
import { newHistogram, pctMs } from './lib/hist.ts';
import { loadSvcProto } from '../src/api/grpc/proto.ts';
import type { AppendRecord } from '../src/gen/svc/v1/AppendRecord.ts';
import { call } from '../test/grpc/client.ts';
import { startGrpcChild } from '../test/grpc/child.ts';

const PHASE_MS = 8000;
/** The large Appends' shapes: [records, headers each]. 65,536 × 16 is a million headers, 8.4 MB. */
const LARGE_SHAPES: [number, number][] = [[65_536, 0], [65_536, 16], [4_096, 1]];

function largeRecords(n: number, headers: number): AppendRecord[] {
  const h = Array.from({ length: headers }, () => ({ name: Buffer.from('h'), value: Buffer.from('v') }));
  return Array.from({ length: n }, () => ({ headers: h, body: Buffer.from('x') }));
}

async function main(): Promise<void> {
  const child = await startGrpcChild();
  // The large messages are encoded once, up front, and sent as bytes on a connection of their own:
  // encoding them per call would hold this process's own event loop, the small producer's.
  const big = new grpc.Client(`127.0.0.1:${child.grpcPort}`, grpc.credentials.createInsecure());
  const encode = (loadSvcProto().packageDefinition['svc.v1.AppendRequest'] as unknown as { serialize(m: object): Buffer }).serialize;
  const send = (bytes: Buffer): Promise<void> => new Promise((resolve, reject) => {
    big.makeUnaryRequest('/svc.v1.DataService/Append', (b: Buffer) => b, (b: Buffer) => b, bytes, new grpc.Metadata(), (err) => (err ? reject(err) : resolve()));
  });
  try {
    await call(child.data.CreateBucket.bind(child.data), { bucket: 'stall', config: { create_stream_on_append: true } });
    const small = { bucket: 'stall', key: Buffer.from('small'), records: [{ body: Buffer.alloc(100, 0x61) }] };
    const smallLoop = async (ms: number): Promise<ReturnType<typeof newHistogram>> => {
      const hist = newHistogram();
      const stopAt = Date.now() + ms;
      while (Date.now() < stopAt) {
        const t = process.hrtime.bigint();
        await call(child.data.Append.bind(child.data), small);
        hist.recordValue(Math.max(1, Number((process.hrtime.bigint() - t) / 1000n)));
      }
      return hist;
    };
    await smallLoop(1000); // warm-up
    const alone = await smallLoop(PHASE_MS);
    const messages = LARGE_SHAPES.map(([n, h]) => ({ shape: `${n} x ${h} headers`, bytes: encode({ bucket: 'stall', key: Buffer.from(`large-${n}-${h}`), records: largeRecords(n, h) }) }));
    const largeMs: Record<string, number[]> = {};
    let stop = false;
    const largeLoop = async (): Promise<void> => {
      for (let i = 0; !stop; i++) {
        const m = messages[i % messages.length];
        const t = Date.now();
        await send(m.bytes);
        (largeMs[m.shape] ??= []).push(Date.now() - t);
      }
    };
    const large = largeLoop();
    const beside = await smallLoop(PHASE_MS);
    stop = true;
    await large;
    const row = (what: string, hst: ReturnType<typeof newHistogram>): string =>
      `${what.padEnd(28)} ${String(hst.totalCount).padStart(7)} ${pctMs(hst, 50).toFixed(2).padStart(8)} ${pctMs(hst, 99).toFixed(2).padStart(8)} ${(hst.maxValue / 1000).toFixed(1).padStart(9)}`;
    console.log('one-record gRPC Appends (closed loop), beside large Appends on another connection\n');
    console.log(`${'small producer'.padEnd(28)} ${'acks'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'max ms'.padStart(9)}`);
    console.log(row('alone', alone));
    console.log(row('beside the large Appends', beside));
    console.log('\nlarge Appends: shape, count, mean ms each');
    for (const [shape, ms] of Object.entries(largeMs)) console.log(`  ${shape.padEnd(22)} ${ms.length} ${(ms.reduce((a, b) => a + b, 0) / ms.length).toFixed(0)}`);
  } finally {
    big.close();
    await child.stop();
  }
}

await main();
