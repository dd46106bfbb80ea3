import { SvcClient, SvcError, formatAddress, parseStreamAddress } from 'svcd/client';

const client = new SvcClient({ url: process.env.SVC_URL ?? 'http://127.0.0.1:7070' });
const orders = parseStreamAddress('svc://shop/orders%2Feu'); // the key is "orders/eu"

try {
  await client.createBucket({ bucket: orders.bucket }, { create_stream_on_append: true });
} catch (err) {
  if (!(err instanceof SvcError && err.kind === 'already_exists')) throw err;
}

// A producer batches, pipelines and retries only what is safe: pinned with match_seq_num, a retry
// after a lost answer can never append a batch twice.
const producer = client.producer(orders, { matchSeqNum: 'tail', lingerMs: 5 });
for (let i = 0; i < 1000; i++) await producer.submit({ body: `order ${i}`, headers: [['source', 'readme']] });
await producer.close();

// Read the last ten records, then follow new ones (resuming by itself across drops and restarts).
for await (const r of client.read(orders, { start: { tailOffset: 10 }, clamp: true })) {
  console.log(r.seq_num, new TextDecoder().decode(r.body));
}
const tail = await client.checkTail(orders);
const live = client.subscribe(orders, { start: { seqNum: tail.seq_num } });
await client.append(orders, [{ body: 'one more' }], { matchSeqNum: tail.seq_num });
for await (const batch of live) {
  console.log(`${formatAddress(orders)} @${batch.records[0].seq_num}: ${batch.records.length} new`);
  break; // ends the subscription
}
