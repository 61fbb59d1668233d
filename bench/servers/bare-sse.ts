import { createServer } from 'node:http';
import { Redis } from 'ioredis';
import { announce } from './announce';

/**
 * The streams bench's baseline: a bare node:http SSE server fed from the same Redis pub/sub
 * channels as the service's streams (BENCH_QUEUE_PREFIX), routing each event by its
 * customer_id to `GET /stream?customer=<id>` clients with the same frames. No auth, no
 * replay, no backpressure bookkeeping: what fan-out alone costs.
 */
const prefix = process.env.BENCH_QUEUE_PREFIX ?? 'bench';
const byCustomer = new Map<string, Set<import('node:http').ServerResponse>>();

const server = createServer((req, res) => {
  const customer = new URL(req.url ?? '/', 'http://x').searchParams.get('customer') ?? '';
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store' });
  res.write('retry: 2000\n\n');
  let set = byCustomer.get(customer);
  if (!set) byCustomer.set(customer, (set = new Set()));
  set.add(res);
  res.on('close', () => set.delete(res));
});

const sub = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
sub.on('message', (channel: string, message: string) => {
  if (!channel.endsWith(':live:events')) {
    JSON.parse(message);
    return;
  }
  for (const e of JSON.parse(message) as Array<{
    seq: string;
    id: string;
    type: string;
    created_at: string;
    customer_id: string | null;
    data: unknown;
  }>) {
    const set = e.customer_id ? byCustomer.get(e.customer_id) : undefined;
    if (!set) continue;
    const frame = `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify({ id: e.id, type: e.type, sequence: Number(e.seq), created_at: e.created_at, data: e.data })}\n\n`;
    for (const res of set) res.write(frame);
  }
});

sub.subscribe(`${prefix}:live:events`, `${prefix}:live:quotes`).then(
  () =>
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      announce(port, async () => {
        server.closeAllConnections();
        server.close();
        sub.disconnect();
      });
    }),
  (err: unknown) => {
    process.stderr.write(`bare-sse: ${String(err)}\n`);
    process.exit(1);
  },
);
