import { randomBytes, randomUUID } from 'node:crypto';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Redis } from 'ioredis';
import { AccessTokens } from '../src/domain/identity/access-tokens';
import { QuoteStore } from '../src/domain/prices/quote-store';
import { eventInsertSql } from '../src/domain/events/outbox';
import { processCpuSeconds } from './lib/cpu';
import { BASE_DATABASE_URL, BENCH_ADMIN, benchPool, dropDatabase, withDatabase } from './lib/bench-kit';
import { CHILD_EXEC_ARGV, fmt, type Figure, type Harness, type Server } from './lib/harness';
import { benchConfig } from './servers/bench-config';

/**
 * Live streams: STREAMS concurrent customer streams (/customers/me/stream) on one API process
 * (ROLE=api, compiled), while 20 symbols are quoted at 50 ticks a second in all (through the
 * quote store, which publishes each change) and order.opened events for random streaming
 * customers are committed to the outbox at 100 a second (outbox rows written as the order
 * engine writes them; the worker's relay, every OUTBOX_RELAY_INTERVAL_MS, publishes them).
 * Measured: delay from an event's commit to its arrival at the client (p50, p99), events
 * delivered per second, the API's CPU (share of a core) and RSS. Baseline: a bare node:http
 * SSE server (servers/bare-sse.ts) fed from the same Redis channel, with the same clients.
 *
 * BENCH_STREAMS (default 2000) and BENCH_DURATION_MS (default 20 s) size it down for a quick run.
 */
const STREAMS = Number(process.env.BENCH_STREAMS ?? 2000);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 20_000);
const SYMBOLS = Array.from({ length: 20 }, (_, i) => `SYM${String(i).padStart(2, '0')}`);
const TICKS_PER_SECOND = 50;
const ORDERS_PER_SECOND = 100;
const RELAY_INTERVAL_MS = process.env.OUTBOX_RELAY_INTERVAL_MS ?? '100';

/** One order.opened event for a customer, answering its seq (the SSE id the clients will see). */
const INSERT_EVENT = eventInsertSql({
  type: 'order.opened',
  aggregateType: 'order',
  aggregateId: '$1',
  customerId: '$2::uuid',
  data: `json_build_object('order', $3::bigint, 'login', 100001, 'symbol', 'EURUSD', 'cmd', 0, 'volume', '1.00')`,
  at: 'now()',
}).replace(/returning id$/, 'returning seq::text as seq');

interface Side {
  /** Arrival time by event seq, first arrival only. */
  arrivals: Map<string, number>;
  delivered: number;
  sockets: IncomingMessage[];
}

function openClients(server: Server, paths: string[], headers: (i: number) => Record<string, string>): Promise<Side> {
  const side: Side = { arrivals: new Map(), delivered: 0, sockets: [] };
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const openOne = (path: string, i: number) =>
    new Promise<void>((resolve, reject) => {
      const req = httpRequest(server.url(path), { agent, headers: { accept: 'text/event-stream', ...headers(i) } }, (res) => {
        if (res.statusCode !== 200) {
          reject(new Error(`stream ${path}: ${res.statusCode}`));
          return;
        }
        side.sockets.push(res);
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const now = performance.now();
          for (const m of chunk.matchAll(/^id: (\d+)$/gm)) {
            side.delivered += 1;
            if (!side.arrivals.has(m[1]!)) side.arrivals.set(m[1]!, now);
          }
          side.delivered += (chunk.match(/^event: (quote|account\.updated)$/gm) ?? []).length;
        });
        resolve();
      });
      req.on('error', reject);
      req.end();
    });
  // In waves: a burst of 2,000 connects overflows the listen backlog (511) and some are reset.
  return (async () => {
    for (let i = 0; i < paths.length; i += 100) await Promise.all(paths.slice(i, i + 100).map((p, j) => openOne(p, i + j)));
    return side;
  })();
}

function rssMb(pid: number): number {
  try {
    const line = require('node:fs')
      .readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l: string) => l.startsWith('VmRSS:'));
    return Number(/\d+/.exec(line)![0]) / 1024;
  } catch {
    return Number.NaN;
  }
}

export async function run(h: Harness): Promise<Figure[]> {
  const tag = randomBytes(4).toString('hex');
  const database = `trading_bench_streams_${tag}`;
  const databaseUrl = withDatabase(BASE_DATABASE_URL, database);
  const prefix = `bench-streams-${tag}`;
  const jwtSecret = randomBytes(36).toString('base64url');
  const env = {
    BENCH_DATABASE_URL: databaseUrl,
    BENCH_QUEUE_PREFIX: prefix,
    BENCH_JWT_SECRET: jwtSecret,
    OUTBOX_RELAY_INTERVAL_MS: RELAY_INTERVAL_MS,
    BOOTSTRAP_ADMIN_EMAIL: BENCH_ADMIN.email,
    BOOTSTRAP_ADMIN_PASSWORD: BENCH_ADMIN.password,
  };
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const pool = benchPool(databaseUrl, 8);
  const figures: Figure[] = [];
  try {
    const api = await h.start({
      entry: 'servers/service.ts',
      name: 'api',
      env,
      execArgv: CHILD_EXEC_ARGV,
      startTimeoutMs: 120_000,
    });
    await h.startWorker('worker', { ...env, WORKER_QUEUES: 'events' });
    const bare = await h.start({ entry: 'servers/bare-sse.ts', name: 'bare-sse', env, execArgv: CHILD_EXEC_ARGV });

    // STREAMS customers, each with one API session (rows written directly: logging in 2,000
    // customers would spend minutes hashing passwords), and their access tokens.
    const customers = Array.from({ length: STREAMS }, () => ({ id: randomUUID(), sid: randomUUID(), token: '' }));
    await pool.query(
      `insert into customers (id, created_at, updated_at, password_hash, email, first_name, last_name)
       select c.id, now(), now(), 'x', 'stream-' || c.id || '@bench.test', 'Bench', 'Stream'
         from unnest($1::uuid[]) as c(id)`,
      [customers.map((c) => c.id)],
    );
    await pool.query(
      `insert into sessions (id, created_at, updated_at, principal_type, kind, principal_id, last_used_at, expires_at)
       select s.sid, now(), now(), 'customer', 'api', s.cid, now(), now() + interval '1 day'
         from unnest($1::uuid[], $2::uuid[]) as s(sid, cid)`,
      [customers.map((c) => c.sid), customers.map((c) => c.id)],
    );
    const config = benchConfig('api', { BENCH_JWT_SECRET: jwtSecret });
    const tokens = new AccessTokens(jwtSecret, config.jwt.issuer, config.jwt.audience);
    for (const c of customers) c.token = await tokens.sign({ sub: c.id, type: 'customer', sid: c.sid, ttlSeconds: 3600 });

    const quotes = new QuoteStore(redis, prefix);
    await quotes.setMany(SYMBOLS.map((symbol) => ({ symbol, bid: '1.10000', ask: '1.10020' })));

    const sideRun = async (name: string, server: Server, open: () => Promise<Side>) => {
      const side = await open();
      await new Promise((r) => setTimeout(r, 2000));
      const committed = new Map<string, number>();
      const cpu0 = processCpuSeconds(server.pid) ?? Number.NaN;
      const delivered0 = side.delivered;
      const started = performance.now();
      let peakRss = rssMb(server.pid);
      let ticks = 0;
      let orders = 0;
      let n = 0;
      const inflight = new Set<Promise<void>>();
      const tickTimer = setInterval(() => {
        const symbol = SYMBOLS[ticks++ % SYMBOLS.length]!;
        const bid = (1.1 + (ticks % 100) / 100_000).toFixed(5);
        quotes.setMany([{ symbol, bid, ask: (Number(bid) + 0.0002).toFixed(5) }]).catch(() => undefined);
      }, 1000 / TICKS_PER_SECOND);
      while (performance.now() - started < DURATION_MS) {
        const due = started + (orders * 1000) / ORDERS_PER_SECOND;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const customer = customers[(n = (n * 7 + 13) % customers.length)]!;
        // Not awaited: the schedule holds even when a commit is slow (the pool queues what it cannot run at once).
        const number = 1000 + orders;
        inflight.add(
          pool.query<{ seq: string }>(INSERT_EVENT, [String(number), customer.id, number]).then(({ rows }) => {
            committed.set(rows[0]!.seq, performance.now());
          }),
        );
        orders += 1;
        if (orders % 100 === 0) peakRss = Math.max(peakRss, rssMb(server.pid));
      }
      clearInterval(tickTimer);
      await Promise.all(inflight);
      const deadline = performance.now() + 10_000;
      while ([...committed.keys()].some((seq) => !side.arrivals.has(seq)) && performance.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      const elapsed = (performance.now() - started) / 1000;
      const cpu = ((processCpuSeconds(server.pid) ?? Number.NaN) - cpu0) / elapsed;
      const delays = [...committed]
        .filter(([seq]) => side.arrivals.has(seq))
        .map(([seq, at]) => side.arrivals.get(seq)! - at)
        .sort((a, b) => a - b);
      const pct = (p: number) => delays[Math.min(delays.length - 1, Math.floor(p * delays.length))] ?? Number.NaN;
      const missing = committed.size - delays.length;
      const rate = (side.delivered - delivered0) / elapsed;
      for (const s of side.sockets) s.destroy();
      process.stderr.write(
        `  streams ${name}: ${STREAMS} streams, ${orders} orders, ${ticks} ticks in ${fmt(elapsed, 1)} s: ` +
          `delay p50 ${fmt(pct(0.5), 1)} ms, p99 ${fmt(pct(0.99), 1)} ms, ${fmt(rate)} events/s delivered, ` +
          `CPU ${fmt(cpu * 100)} % of a core, RSS peak ${fmt(peakRss)} MB, missing ${missing}\n`,
      );
      return { rate, p50: pct(0.5), p99: pct(0.99), cpu, rss: peakRss, missing, elapsed };
    };

    const candidate = await sideRun('service', api, () =>
      openClients(
        api,
        customers.map(() => '/customers/me/stream'),
        (i) => ({ authorization: `Bearer ${customers[i]!.token}` }),
      ),
    );
    const baseline = await sideRun('bare node:http', bare, () =>
      openClients(
        bare,
        customers.map((c) => `/stream?customer=${c.id}`),
        () => ({}),
      ),
    );
    const size = Math.max(1, Math.round(candidate.rate * candidate.elapsed));
    figures.push(
      h.record({
        name: `live streams: ${STREAMS} customer streams, quotes 20 symbols at ${TICKS_PER_SECOND}/s, orders at ${ORDERS_PER_SECOND}/s, events/s delivered vs a bare node:http SSE server on the same Redis channel`,
        unit: 'events',
        size,
        connections: STREAMS,
        // One timed window each: the rate of a side is the common size over its `ms`.
        candidate: [{ ms: (size / (candidate.rate || 1)) * 1000, failures: candidate.missing }],
        baseline: [{ ms: (size / (baseline.rate || 1)) * 1000, failures: baseline.missing }],
        detail: { candidate, baseline, relayIntervalMs: Number(RELAY_INTERVAL_MS) },
      }),
    );
    return figures;
  } finally {
    await h.close();
    redis.disconnect();
    await pool.end().catch(() => undefined);
    await dropDatabase(database).catch((err: unknown) =>
      process.stderr.write(`  streams: could not drop database ${database}: ${String(err)}\n`),
    );
  }
}
