import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Client, Pool } from 'pg';
import { AS_COMPILED, fmt, type Figure, type Harness, type Server } from './lib/harness';
import { call } from './lib/load';

/**
 * The trading engine (decisions 12) with 100,000 resting pending orders across 20 symbols
 * (5,000 buy limits per symbol at distinct triggers below the market, inserted with SQL as
 * createPendingOrder writes them; one account per symbol, so no account reaches the position
 * limit), run as in production: one API child (ROLE=api) and worker children (ROLE=worker),
 * compiled, on a database and queue prefix of this run's own, removed at the end.
 *
 * With 1, then 2 worker processes:
 * - a tick that triggers nothing: the time from POST /simulator/quotes answering to the
 *   engine having evaluated the change (the tick book's `done` reaching its `ver`), one
 *   change at a time (median and p99 of SAMPLES);
 * - throughput: BURST quote changes spread over the 20 symbols as fast as the API takes
 *   them, none triggering, until every one is evaluated: quote changes absorbed per second
 *   (a burst for one symbol is coalesced to its latest price, so fewer passes run);
 * - fill latency: the quote moves down one trigger at a time, each change triggering exactly
 *   one order; the time from the quote change answered to the order's row `filled` (median
 *   and p99 of SAMPLES), polled every 2 ms.
 * The baseline of each figure, measured in the same run, is the raw indexed lookup a tick
 * makes for pending orders (the four range queries of one symbol through `pg`): what a tick
 * would cost with no engine around it.
 */
const SYMBOLS = 20;
const PER_SYMBOL = Number(process.env.BENCH_ENGINE_PER_SYMBOL ?? 5000);
const SAMPLES = Number(process.env.BENCH_ENGINE_SAMPLES ?? 40);
const BURST = 400;
const ADMIN = { email: 'bench-admin@bench.test', password: 'bench-desk-key-7719' };
const BASE_DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/trading_bench';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const POINT = 0.0001;

const symbolName = (i: number) => `${String.fromCharCode(65 + Math.floor(i / 26))}${String.fromCharCode(65 + (i % 26))}XUSD`;

export async function run(h: Harness): Promise<Figure[]> {
  const tag = randomBytes(4).toString('hex');
  const database = `trading_bench_engine_${tag}`;
  const prefix = `bench-engine-${tag}`;
  const env = {
    BENCH_DATABASE_URL: withDatabase(BASE_DATABASE_URL, database),
    BENCH_QUEUE_PREFIX: prefix,
    BENCH_LOG_LEVEL: 'warn',
  };
  const servers: Server[] = [];
  const pool = new Pool({ connectionString: env.BENCH_DATABASE_URL, max: 4 });
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  const startWorker = async (n: number) => {
    const w = await h.start({ entry: 'servers/worker.ts', name: `worker${n}`, announces: 'ready', execArgv: AS_COMPILED, env });
    servers.push(w);
    return w;
  };
  try {
    const api = await h.start({
      entry: 'servers/service.ts',
      name: 'api',
      execArgv: AS_COMPILED,
      env: { ...env, BOOTSTRAP_ADMIN_EMAIL: ADMIN.email, BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password },
    });
    servers.push(api);
    await redis.connect();
    const token = (await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', ADMIN, 200)).access_token;
    const as = <T>(method: string, path: string, body: unknown, status: number | number[]) =>
      request<T>(api, method, path, token, body, status);
    const group = await as<{ id: string }>('POST', '/groups', { name: `bench-${tag}`, default_leverage: 100 }, 201);
    const customer = await as<{ id: string }>(
      'POST',
      '/api/crm/customers',
      { email: `bench-${tag}@bench.test`, password: 'bench-customer-password', first_name: 'Bench', last_name: 'Engine' },
      201,
    );
    const symbols = Array.from({ length: SYMBOLS }, (_, i) => symbolName(i));
    progress(`setting up ${SYMBOLS} symbols x ${fmt(PER_SYMBOL)} resting buy limits`);
    for (const symbol of symbols) {
      await as(
        'POST',
        '/api/platform/instruments',
        { symbol, digits: 4, contract_size: 1000, base_currency: symbol.slice(0, 3), quote_currency: 'USD' },
        [201, 409],
      );
      await as('POST', '/simulator/quotes', { symbol, bid: 1, ask: 1.0002 }, 200);
      const account = await as<{ login: number }>(
        'POST',
        `/api/crm/customers/${customer.id}/accounts`,
        { kind: 'live', group_id: group.id },
        201,
      );
      await as('POST', `/api/backoffice/accounts/${account.login}/deposits`, { amount: 1_000_000_000 }, 201);
      // Triggers 0.5000, 0.5001, ... 0.9999 (PER_SYMBOL of them, highest just under the market).
      await pool.query(
        `insert into pending_orders (id, created_at, updated_at, request_id, account_id, login, symbol, cmd, volume, trigger_price)
         select gen_random_uuid(), now(), now(), gen_random_uuid(), a.id, a.login, $2, 2, 0.01, round(0.9999 - (g - 1) * 0.0001, 4)
           from accounts a, generate_series(1, $3::int) g where a.login = $1`,
        [account.login, symbol, PER_SYMBOL],
      );
    }
    await pool.query('analyze pending_orders');
    const book = (symbol: string) =>
      Promise.all([redis.hget(`${prefix}:engine:ver`, symbol), redis.hget(`${prefix}:engine:done`, symbol)]);
    const evaluated = async (list: string[], timeoutMs = 120_000) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const states = await Promise.all(list.map(book));
        if (states.every(([v, d]) => Number(v ?? 0) <= Number(d ?? 0))) return;
        if (Date.now() > deadline) throw new Error('ticks not evaluated in time');
        await sleep(1);
      }
    };
    // Where each symbol's quote sits: the next trigger down is `next[symbol]`.
    const next = new Map(symbols.map((s) => [s, 0.9999]));
    const setQuote = (symbol: string, ask: number) =>
      as('POST', '/simulator/quotes', { symbol, bid: round4(ask - 2 * POINT), ask: round4(ask) }, 200);

    const measureWith = async (workers: number) => {
      // Warm-up: a few ticks of every symbol.
      for (const s of symbols) await setQuote(s, 1.0002);
      await evaluated(symbols);
      const idle: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const s = symbols[i % SYMBOLS]!;
        await setQuote(s, i % 2 === 0 ? 1.0003 : 1.0002);
        const t0 = performance.now();
        await evaluated([s]);
        idle.push(performance.now() - t0);
      }
      const t0 = performance.now();
      const sends: Array<Promise<unknown>> = [];
      for (let i = 0; i < BURST; i++) sends.push(setQuote(symbols[i % SYMBOLS]!, i % 2 === 0 ? 1.0003 : 1.0002));
      await Promise.all(sends);
      await evaluated(symbols);
      const burstMs = performance.now() - t0;
      const fills: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const s = symbols[i % SYMBOLS]!;
        const trigger = next.get(s)!;
        next.set(s, round4(trigger - POINT));
        const { rows } = await pool.query<{ ticket: string }>(
          `select ticket from pending_orders where symbol = $1 and trigger_price = $2 and status = 'pending'`,
          [s, trigger],
        );
        const started = performance.now();
        await setQuote(s, trigger);
        for (;;) {
          const r = await pool.query(`select 1 from pending_orders where ticket = $1 and status = 'filled'`, [rows[0]!.ticket]);
          if (r.rowCount) break;
          if (performance.now() - started > 60_000) throw new Error('fill not seen');
          await sleep(2);
        }
        fills.push(performance.now() - started);
        // Back above the next trigger, so the next sample on this symbol triggers one order again.
        await setQuote(s, 1.0002);
      }
      await evaluated(symbols);
      return { workers, idle: stats(idle), fill: stats(fills), burstPerSecond: (BURST / burstMs) * 1000 };
    };

    const baseline = async () => {
      const times: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const s = symbols[i % SYMBOLS]!;
        const t0 = performance.now();
        for (const [watch, cmp, bound] of [
          [1, '>=', 1.0002],
          [2, '<=', 1.0002],
          [3, '<=', 1],
          [4, '>=', 1],
        ] as const)
          await pool.query(
            `select ticket from pending_orders where symbol = $1 and watch = ${watch} and watch_price ${cmp} $2 and (expiry_at is null or expiry_at > now()) and ticket > 0 order by ticket limit 500`,
            [s, bound],
          );
        times.push(performance.now() - t0);
      }
      return stats(times);
    };

    await startWorker(1);
    progress('1 worker process');
    const one = await measureWith(1);
    const base1 = await baseline();
    report(one, base1);
    await startWorker(2);
    progress('2 worker processes');
    const two = await measureWith(2);
    const base2 = await baseline();
    report(two, base2);
    const resting = await pool.query<{ n: string }>(`select count(*)::text as n from pending_orders where status = 'pending'`);
    progress(`resting at the end: ${resting.rows[0]!.n}`);
    return [];
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await pool.end();
    redis.disconnect();
    await dropDatabase(database);
  }
}

function report(r: { workers: number; idle: Stats; fill: Stats; burstPerSecond: number }, base: Stats): void {
  process.stdout.write(
    `${JSON.stringify({
      worker_processes: r.workers,
      resting_pending_orders: SYMBOLS * PER_SYMBOL,
      idle_tick_ms: r.idle,
      quote_changes_absorbed_per_second: Math.round(r.burstPerSecond),
      quote_to_fill_ms: r.fill,
      baseline_indexed_lookup_ms: base,
    })}\n`,
  );
}

interface Stats {
  p50: number;
  p99: number;
}

function stats(values: number[]): Stats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: round2(at(0.5)), p99: round2(at(0.99)) };
}

const round2 = (n: number) => Math.round(n * 100) / 100;
const round4 = (n: number) => Math.round(n * 10_000) / 10_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function progress(message: string): void {
  process.stderr.write(`  engine: ${message}\n`);
}

async function request<T>(
  api: Server,
  method: string,
  path: string,
  token: string,
  body: unknown,
  status: number | number[],
): Promise<T> {
  const reply = await call(api.url(path), {
    method,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    body: body === undefined ? undefined : (body as object),
  });
  if (!(Array.isArray(status) ? status : [status]).includes(reply.status)) {
    throw new Error(`${method} ${path} answered ${reply.status}: ${reply.body.slice(0, 300)}`);
  }
  return (reply.body ? JSON.parse(reply.body) : undefined) as T;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function dropDatabase(database: string): Promise<void> {
  const client = new Client({ connectionString: withDatabase(BASE_DATABASE_URL, 'postgres') });
  await client.connect();
  try {
    await client.query(`drop database if exists "${database.replace(/"/g, '""')}" with (force)`);
  } finally {
    await client.end();
  }
}
