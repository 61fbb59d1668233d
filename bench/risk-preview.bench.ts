import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Pool } from 'pg';
import { statsQuery } from '../src/domain/risk/classify';
import { windowEndingAt } from '../src/domain/risk/preview';
import { RiskRuleInputSchema } from '../src/domain/risk/rule-input';
import { pgPlaceholders } from '../src/platform/named-sql';
import {
  BASE_DATABASE_URL,
  BENCH_ADMIN as ADMIN,
  benchPool,
  dropDatabase,
  progressOf,
  request,
  withDatabase,
} from './lib/bench-kit';
import { CHILD_EXEC_ARGV, fmt, type BatchRound, type Figure, type Harness, type Server } from './lib/harness';
import { call } from './lib/load';

/**
 * Risk rule preview (POST /risk/rules/preview, endpoint 11) over ACCOUNTS trading accounts
 * and ORDERS closed orders: the time of the HTTP answer (the API records the run, a worker on
 * the `risk` queue classifies with one aggregate query, the API answers from the run) against
 * the single SQL aggregate computing the same per-account statistics (trades, wins, win rate,
 * profit factor, average hold, trades per day) run straight on Postgres through `pg`, rows
 * fetched. ratio = baseline ms / answer ms (aim: at least 0.8, and the answer within
 * RISK_PREVIEW_WAIT_MS's default 30 s).
 *
 * Memory: the worker (ROLE=worker, WORKER_QUEUES=risk: a pool serving the risk queue alone)
 * reports its peak RSS (VmHWM) after the rounds at a tenth of the orders and again after the
 * rounds at all of them: flat when no order reaches Node.
 *
 * The data is written with SQL (generate_series): accounts in one group, orders spread over
 * them with hold times of 1 s to 2 h, profits of -50 to +50, closed in the last 30 days.
 * BENCH_RISK_ORDERS and BENCH_RISK_ACCOUNTS change the sizes.
 */
const ACCOUNTS = positiveInteger('BENCH_RISK_ACCOUNTS') ?? 10_000;
const ORDERS = positiveInteger('BENCH_RISK_ORDERS') ?? 1_000_000;
const ROUNDS = positiveInteger('BENCH_ROUNDS') ?? 3;
const progress = progressOf('risk-preview');

export async function run(h: Harness): Promise<Figure[]> {
  const tag = randomBytes(4).toString('hex');
  const database = `trading_bench_risk_${tag}`;
  const prefix = `bench-risk-${tag}`;
  const env = {
    BENCH_DATABASE_URL: withDatabase(BASE_DATABASE_URL, database),
    BENCH_QUEUE_PREFIX: prefix,
    BENCH_LOG_LEVEL: 'warn',
  };
  const servers: Server[] = [];
  const pool = benchPool(env.BENCH_DATABASE_URL, 2);
  try {
    const api = await h.start({
      entry: 'servers/service.ts',
      name: 'api',
      execArgv: CHILD_EXEC_ARGV,
      env: {
        ...env,
        BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
        BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
        RISK_PREVIEW_WAIT_MS: '120000',
      },
    });
    servers.push(api);
    const worker = await h.startWorker('risk-worker', { ...env, WORKER_QUEUES: 'risk', WORKER_CONCURRENCY: '1' });
    servers.push(worker);

    const token = await login(api);
    const group = await request<{ id: string }>(api, 'POST', '/groups', token, { name: `bench-risk-${tag}` }, 201);
    const customer = await request<{ id: string }>(
      api,
      'POST',
      '/api/crm/customers',
      token,
      { email: `bench-risk-${tag}@bench.test`, password: 'bench-customer-password', first_name: 'Bench', last_name: 'Risk' },
      201,
    );
    const body = {
      min_trades_to_classify: 20,
      rolling_window_days: 30,
      conditions: { group_ids: [group.id] },
      actions: { toxic: { disable_trading: true } },
      toxic: { max_avg_hold_seconds: 900, min_win_rate: 0.55 },
      watchlist: { min_win_rate: 0.5, min_profit_factor: 1.1 },
    };

    const t0 = performance.now();
    await seedAccounts(pool, customer.id, group.id, ACCOUNTS);
    const figures: Figure[] = [];
    const tenth = Math.max(1, Math.floor(ORDERS / 10));
    await seedOrders(pool, group.id, tenth, 0);
    progress(`seeded ${fmt(ACCOUNTS)} accounts and ${fmt(tenth)} orders in ${fmt((performance.now() - t0) / 1000, 1)} s`);
    const small = await rounds(api, token, pool, body, worker);
    const rssSmall = peakRss(worker.pid);

    const t1 = performance.now();
    await seedOrders(pool, group.id, ORDERS - tenth, tenth);
    progress(`seeded ${fmt(ORDERS - tenth)} more orders in ${fmt((performance.now() - t1) / 1000, 1)} s`);
    const large = await rounds(api, token, pool, body, worker);
    const rssLarge = peakRss(worker.pid);
    progress(
      `worker peak RSS: ${fmt(rssSmall / 1024)} MiB after ${fmt(tenth)} orders, ${fmt(rssLarge / 1024)} MiB after ${fmt(ORDERS)}`,
    );

    for (const [size, sides] of [
      [tenth, small],
      [ORDERS, large],
    ] as const) {
      figures.push(
        h.record({
          name: `risk preview over ${fmt(ACCOUNTS)} accounts and ${fmt(size)} closed orders, HTTP answer vs the single stats aggregate via pg (orders/s)`,
          unit: 'orders',
          size,
          connections: 1,
          ...sides,
          detail: { accounts: ACCOUNTS, worker_peak_rss_kib: { [tenth]: rssSmall, [ORDERS]: rssLarge } },
        }),
      );
    }
    return figures;
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await pool.end().catch(() => undefined);
    await dropDatabase(database).catch((err: unknown) => progress(`could not drop database ${database}: ${String(err)}`));
  }
}

async function rounds(api: Server, token: string, pool: Pool, body: Record<string, unknown>, worker: Server) {
  const sides: { candidate: BatchRound[]; baseline: BatchRound[] } = { candidate: [], baseline: [] };
  // One of each first, unmeasured: JIT, plans and the buffer cache.
  await candidate(api, token, body, pool);
  await baseline(pool, body);
  for (let round = 1; round <= ROUNDS; round++) {
    const c = await candidate(api, token, body, pool);
    const b = await baseline(pool, body);
    sides.candidate.push(c);
    sides.baseline.push(b);
    progress(
      `round ${round}/${ROUNDS}: answer ${fmt(c.ms)} ms (${JSON.stringify(c.detail?.counts)}; ${JSON.stringify(c.detail?.phases_ms)}), ` +
        `aggregate ${fmt(b.ms)} ms ` +
        `(${b.detail?.rows} rows); worker RSS ${fmt(currentRss(worker.pid) / 1024)} MiB`,
    );
  }
  return sides;
}

async function candidate(api: Server, token: string, body: Record<string, unknown>, pool: Pool): Promise<BatchRound> {
  const sent = Date.now();
  const t0 = performance.now();
  const reply = await call(api.url('/risk/rules/preview'), {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body,
  });
  const ms = performance.now() - t0;
  const answered = Date.now();
  if (reply.status !== 200) throw new Error(`POST /risk/rules/preview answered ${reply.status}: ${reply.body.slice(0, 300)}`);
  const run = JSON.parse(reply.body) as { id: string; counts: Record<string, number>; accounts_evaluated: number };
  // Where the time went, from the run's own timestamps (one machine, one clock).
  const { rows } = await pool.query<{ created_at: Date; completed_at: Date }>(
    'select created_at, completed_at from risk_runs where id = $1',
    [run.id],
  );
  const recorded = rows[0]!.created_at.getTime();
  const completed = rows[0]!.completed_at.getTime();
  return {
    ms,
    failures: 0,
    detail: {
      counts: run.counts,
      accounts_evaluated: run.accounts_evaluated,
      phases_ms: {
        request_to_run_recorded: recorded - sent,
        run_recorded_to_classified: completed - recorded,
        classified_to_answer: answered - completed,
      },
    },
  };
}

async function baseline(pool: Pool, body: Record<string, unknown>): Promise<BatchRound> {
  const input = RiskRuleInputSchema.parse(body);
  const stmt = statsQuery(input, windowEndingAt(new Date(), input.rolling_window_days));
  const t0 = performance.now();
  const result = await pool.query(pgPlaceholders(stmt.sql), stmt.values);
  const ms = performance.now() - t0;
  return { ms, failures: 0, detail: { rows: result.rowCount } };
}

async function seedAccounts(pool: Pool, customerId: string, groupId: string, n: number): Promise<void> {
  await pool.query(
    `insert into accounts (id, created_at, updated_at, customer_id, kind, group_id, currency, balance, reserved)
     select gen_random_uuid(), now(), now(), $1, 'live', $2, 'USD', 0, 0 from generate_series(1, $3::int)`,
    [customerId, groupId, n],
  );
}

/** `n` closed orders spread over the group's accounts (deterministic from their number), closed in the last 30 days. */
async function seedOrders(pool: Pool, groupId: string, n: number, offset: number): Promise<void> {
  const chunk = 250_000;
  for (let from = 0; from < n; from += chunk) {
    const count = Math.min(chunk, n - from);
    // Accounts by position in two arrays: an order's account is ids[1 + i % n], found by index, not by a join.
    await pool.query(
      `with acc as (select array_agg(id order by login) as ids, array_agg(login order by login) as logins, count(*)::int as n
                      from accounts where group_id = $1)
       insert into orders (id, created_at, updated_at, account_id, login, symbol, cmd, volume, open_price, contract_size,
                           status, closed_at, close_price, profit, close_reason)
       select gen_random_uuid(), c - make_interval(secs => 1 + (i * 7919 % 7200)), c, acc.ids[1 + i % acc.n],
              acc.logins[1 + i % acc.n], 'EURUSD', (i % 2)::smallint, 0.01, 1.1, 100000, 'closed', c, 1.1,
              ((i * 104729 % 10001) - 5000) / 100.0, 'client'
         from acc, generate_series($3::bigint + 1, $3::bigint + $2::int) as i,
              lateral (select now() - make_interval(secs => (i * 6151 % (29 * 86400))) as c) t`,
      [groupId, count, offset + from],
    );
  }
  await pool.query('analyze orders');
  await pool.query('analyze accounts');
}

/** Peak resident set size of a process (VmHWM), KiB. */
function peakRss(pid: number): number {
  return statusField(pid, 'VmHWM');
}

function currentRss(pid: number): number {
  return statusField(pid, 'VmRSS');
}

function statusField(pid: number, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : NaN;
}

async function login(api: Server): Promise<string> {
  return (await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', ADMIN, 200)).access_token;
}

function positiveInteger(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}
