import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Pool } from 'pg';
import { ledgerInsertSql } from '../src/domain/ledger/ledger';
import { rolloverInstant } from '../src/domain/eod/rollover';
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

/**
 * The end of day (POST /api/backoffice/eod/runs) over ACCOUNTS trading accounts holding
 * ORDERS open orders: from the request to the run's `completed`, with the `eod` pool at 1 and
 * then 2 worker processes (each WORKER_CONCURRENCY_EOD jobs at once), in accounts per second.
 * Each account's swaps are booked and its snapshot written in its own transaction, through the
 * service's code (ledger rows, balance, account metrics at current quotes, movements).
 *
 * Baseline: the same bookings and snapshots as set-based SQL through `pg` in one
 * transaction: one statement takes the (order, date) keys, changes the balances and books the
 * ledger rows (the ledger's own insert, composed), one writes every snapshot with equity and
 * margin at a fixed price. ratio = service accounts/s / baseline accounts/s (aim: 0.5).
 * Every round runs a trading date of its own (weekdays before the triple day), so each books
 * every order once.
 *
 * Memory: each worker's peak RSS (VmHWM) after its rounds. BENCH_EOD_ACCOUNTS (10 000),
 * BENCH_EOD_ORDERS (100 000) and BENCH_ROUNDS (3) change the sizes.
 */
const ACCOUNTS = positiveInteger('BENCH_EOD_ACCOUNTS') ?? 10_000;
const ORDERS = positiveInteger('BENCH_EOD_ORDERS') ?? 100_000;
const ROUNDS = positiveInteger('BENCH_ROUNDS') ?? 3;
const CONCURRENCY = String(positiveInteger('BENCH_EOD_CONCURRENCY') ?? 8);
const progress = progressOf('eod');

/** Mondays, Tuesdays and Thursdays of 2025: one night each, a fresh date per round and side. */
function* tradingDates(): Generator<string> {
  for (let t = Date.parse('2025-01-06T00:00:00Z'); ; t += 86_400_000) {
    const day = new Date(t).getUTCDay();
    if (day === 1 || day === 2 || day === 4) yield new Date(t).toISOString().slice(0, 10);
  }
}

export async function run(h: Harness): Promise<Figure[]> {
  const tag = randomBytes(4).toString('hex');
  const database = `trading_bench_eod_${tag}`;
  const prefix = `bench-eod-${tag}`;
  const env = {
    BENCH_DATABASE_URL: withDatabase(BASE_DATABASE_URL, database),
    BENCH_QUEUE_PREFIX: prefix,
    BENCH_LOG_LEVEL: 'warn',
  };
  const servers: Server[] = [];
  const pool = benchPool(env.BENCH_DATABASE_URL, 2);
  const dates = tradingDates();
  try {
    const api = await h.start({
      entry: 'servers/service.ts',
      name: 'api',
      execArgv: CHILD_EXEC_ARGV,
      env: { ...env, BOOTSTRAP_ADMIN_EMAIL: ADMIN.email, BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password },
    });
    servers.push(api);
    const workerEnv = { ...env, WORKER_QUEUES: 'eod', WORKER_CONCURRENCY_EOD: CONCURRENCY };
    const first = await h.startWorker('eod-worker-1', workerEnv);
    servers.push(first);

    const token = (await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', ADMIN, 200)).access_token;
    const group = await request<{ id: string }>(api, 'POST', '/groups', token, { name: `bench-eod-${tag}` }, 201);
    await request(
      api,
      'POST',
      '/api/platform/instruments',
      token,
      {
        symbol: 'EURUSD',
        digits: 5,
        contract_size: 100000,
        base_currency: 'EUR',
        quote_currency: 'USD',
      },
      201,
    );
    await request(api, 'POST', '/simulator/quotes', token, { symbol: 'EURUSD', bid: 1.1, ask: 1.1002 }, 200);
    await request(
      api,
      'PUT',
      `/groups/${group.id}/instruments/EURUSD`,
      token,
      {
        enabled: true,
        spread: 0,
        swap_long: -2.5,
        swap_short: 1.2,
      },
      201,
    );
    const customer = await request<{ id: string }>(
      api,
      'POST',
      '/api/crm/customers',
      token,
      {
        email: `bench-eod-${tag}@bench.test`,
        password: 'bench-customer-password',
        first_name: 'Bench',
        last_name: 'Eod',
      },
      201,
    );
    const t0 = performance.now();
    await seed(pool, customer.id, group.id);
    progress(`seeded ${fmt(ACCOUNTS)} accounts and ${fmt(ORDERS)} open orders in ${fmt((performance.now() - t0) / 1000, 1)} s`);

    const figures: Figure[] = [];
    const rss: Record<string, number> = {};
    for (const workers of [1, 2]) {
      if (workers === 2) servers.push(await h.startWorker('eod-worker-2', workerEnv));
      const sides: { candidate: BatchRound[]; baseline: BatchRound[] } = { candidate: [], baseline: [] };
      for (let round = 0; round <= ROUNDS; round++) {
        const c = await candidate(api, token, pool, dates.next().value!);
        const b = await baseline(pool, group.id, dates.next().value!);
        // Round 0 is unmeasured: JIT, plans and the buffer cache.
        if (round === 0) continue;
        sides.candidate.push(c);
        sides.baseline.push(b);
        progress(
          `${workers} worker(s), round ${round}/${ROUNDS}: service ${fmt(c.ms)} ms (${JSON.stringify(c.detail)}), ` +
            `set-based SQL ${fmt(b.ms)} ms; worker RSS ${servers
              .filter((s) => s.name.startsWith('eod-worker'))
              .map((s) => fmt(statusKib(s.pid, 'VmRSS') / 1024))
              .join(', ')} MiB`,
        );
      }
      for (const s of servers.filter((x) => x.name.startsWith('eod-worker')))
        rss[`${s.name}_peak_kib_after_${workers}`] = statusKib(s.pid, 'VmHWM');
      figures.push(
        h.record({
          name: `end of day over ${fmt(ACCOUNTS)} accounts and ${fmt(ORDERS)} open orders, ${workers} eod worker process(es) vs set-based SQL via pg (accounts/s)`,
          unit: 'accounts',
          size: ACCOUNTS,
          connections: workers,
          ...sides,
          detail: { accounts: ACCOUNTS, orders: ORDERS, concurrency_per_worker: Number(CONCURRENCY), worker_rss: { ...rss } },
        }),
      );
    }
    progress(`worker peak RSS (KiB): ${JSON.stringify(rss)}`);
    return figures;
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await pool.end().catch(() => undefined);
    await dropDatabase(database).catch((err: unknown) => progress(`could not drop database ${database}: ${String(err)}`));
  }
}

async function candidate(api: Server, token: string, pool: Pool, tradingDate: string): Promise<BatchRound> {
  const t0 = performance.now();
  const started = await request<{ id: string }>(
    api,
    'POST',
    '/api/backoffice/eod/runs',
    token,
    { trading_date: tradingDate },
    202,
  );
  for (;;) {
    const { rows } = await pool.query<{ status: string; accounts_done: number; accounts_failed: number; swaps_booked: number }>(
      'select status, accounts_done, accounts_failed, swaps_booked from eod_runs where id = $1',
      [started.id],
    );
    const run = rows[0]!;
    if (run.status === 'completed' || run.status === 'failed') {
      const ms = performance.now() - t0;
      return {
        ms,
        failures: run.accounts_failed,
        detail: { status: run.status, swaps: run.swaps_booked, done: run.accounts_done },
      };
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

const BOOK_SWAPS = `
with due as (
  select o.ticket, o.account_id,
         round(case when o.cmd = 0 then gi.swap_long else gi.swap_short end * o.volume * g.swap_multiplier, 2) as amount
    from orders o
    join accounts a on a.id = o.account_id
    join trading_groups g on g.id = a.group_id
    join instruments i on i.symbol = o.symbol
    join group_instruments gi on gi.group_id = g.id and gi.instrument_id = i.id
   where o.status = 'open' and o.created_at < $2 and g.swap_enabled and a.group_id = $3
), b as (
  insert into swap_bookings (ticket, trading_date, account_id, amount, created_at)
  select ticket, $1::date, account_id, amount, now() from due where amount <> 0
  on conflict do nothing
  returning ticket, account_id, amount
), per as (
  select account_id, sum(amount) as total from b group by account_id
), a as (
  update accounts set balance = accounts.balance + per.total, updated_at = now() from per
   where accounts.id = per.account_id returning accounts.id, accounts.balance
), x as (
  select b.ticket::text as ticket, b.account_id, b.amount,
         a.balance - per.total + sum(b.amount) over (partition by b.account_id order by b.ticket) as balance_after
    from b join a on a.id = b.account_id join per on per.account_id = b.account_id
), l as (
  ${ledgerInsertSql([
    {
      id: 'gen_random_uuid()',
      bookedAt: 'now()',
      accountId: 'x.account_id',
      kind: 'swap',
      amount: 'x.amount',
      balanceAfter: 'x.balance_after',
      referenceType: 'order',
      referenceId: 'x.ticket',
      comment: "'Swap'",
      from: 'x',
    },
  ])}
)
select count(*)::int as booked from l`;

const WRITE_SNAPSHOTS = `
insert into account_daily_snapshots (id, account_id, login, trading_date, balance, equity, margin, free_margin,
  floating_profit, movements, ledger_seq, open_orders, created_at)
select gen_random_uuid(), a.id, a.login, $1::date, a.balance, a.balance + coalesce(f.fp, 0), coalesce(f.margin, 0),
       a.balance + coalesce(f.fp, 0) - coalesce(f.margin, 0), coalesce(f.fp, 0), coalesce(m.mv, '{}'::jsonb),
       coalesce(m.last, p.s, 0), coalesce(f.n, 0), now()
  from accounts a
  left join lateral (
    select round(sum(case when o.cmd = 0 then ($2::numeric - o.open_price) else (o.open_price - $3::numeric) end * o.volume * o.contract_size), 2) as fp,
           round(sum(o.volume * o.contract_size * o.open_price / 100), 2) as margin, count(*)::int as n
      from orders o where o.account_id = a.id and o.status = 'open'
  ) f on true
  left join lateral (
    select max(ledger_seq) as s from account_daily_snapshots p where p.account_id = a.id and p.trading_date < $1::date
  ) p on true
  left join lateral (
    select jsonb_object_agg(k.kind, k.total) as mv, max(k.last) as last
      from (select l.kind, sum(l.amount)::text as total, max(l.seq) as last from ledger_entries l
             where l.account_id = a.id and l.seq > coalesce(p.s, 0) group by l.kind) k
  ) m on true
 where a.group_id = $4
on conflict (account_id, trading_date) do nothing`;

async function baseline(pool: Pool, groupId: string, tradingDate: string): Promise<BatchRound> {
  const cutoff = rolloverInstant(tradingDate, '21:00');
  const client = await pool.connect();
  const t0 = performance.now();
  try {
    await client.query('begin');
    const booked = await client.query<{ booked: number }>(BOOK_SWAPS, [tradingDate, cutoff, groupId]);
    const snapshots = await client.query(WRITE_SNAPSHOTS, [tradingDate, '1.1', '1.1002', groupId]);
    await client.query('commit');
    const ms = performance.now() - t0;
    return { ms, failures: 0, detail: { swaps: booked.rows[0]!.booked, snapshots: snapshots.rowCount } };
  } catch (err) {
    await client.query('rollback');
    throw err;
  } finally {
    client.release();
  }
}

/** Accounts created and orders opened in 2024, before every date the rounds run. */
async function seed(pool: Pool, customerId: string, groupId: string): Promise<void> {
  await pool.query(
    `insert into accounts (id, created_at, updated_at, customer_id, kind, group_id, currency, balance, reserved)
     select gen_random_uuid(), '2024-12-01', now(), $1, 'live', $2, 'USD', 0, 0 from generate_series(1, $3::int)`,
    [customerId, groupId, ACCOUNTS],
  );
  await pool.query(
    `with acc as (select array_agg(id order by login) as ids, array_agg(login order by login) as logins, count(*)::int as n
                    from accounts where group_id = $1)
     insert into orders (id, created_at, updated_at, account_id, login, symbol, cmd, volume, open_price, contract_size, status)
     select gen_random_uuid(), '2024-12-02', now(), acc.ids[1 + i % acc.n], acc.logins[1 + i % acc.n], 'EURUSD',
            (i % 2)::smallint, 0.10, 1.1, 100000, 'open'
       from acc, generate_series(1, $2::int) as i`,
    [groupId, ORDERS],
  );
  await pool.query('analyze orders');
  await pool.query('analyze accounts');
}

function statusKib(pid: number, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : NaN;
}

function positiveInteger(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}
