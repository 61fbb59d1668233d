import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpuSecondsByName, cpuSecondsSince, processCpuSeconds } from './lib/cpu';
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
 * Each chunk of accounts books its swaps and writes its snapshots in one transaction, a
 * statement per kind for the chunk, through the service's code (ledger rows, balance, account
 * metrics at current quotes, movements, the rollover steps).
 *
 * Baseline: the same bookings and snapshots as set-based SQL through `pg` in one
 * transaction: one statement takes the (order, date) keys, changes the balances and books the
 * ledger rows (the ledger's own insert, composed), one writes every snapshot with equity and
 * margin at a fixed price. ratio = service accounts/s / baseline accounts/s (aim: 0.5).
 * Every round runs a trading date of its own (weekdays before the triple day), so each books
 * every order once.
 *
 * Per process (the API, each worker): its RSS once started, its peak RSS during the rounds
 * (VmHWM, reset once the process is up so start-up, which compiles the TypeScript, is not
 * counted) and the CPU seconds it used on the service's side; Postgres's CPU seconds likewise.
 * While the service runs, the database's wait events are sampled (what the chunks wait on).
 *
 * The workers run with --max-semi-space-size=16 as the docker-compose pool does
 * (BENCH_EOD_SEMI_SPACE_MB; 0 for V8's default, which lets the young generation grow to 128 MiB
 * under the chunks' allocation rate: a ceiling reached at any size, not growth with the run).
 *
 * Sizes: BENCH_EOD_ACCOUNTS (10 000) and BENCH_EOD_ORDERS (100 000), both multiplied by
 * BENCH_EOD_SCALE (1; 10 runs 100 000 accounts and 1 000 000 orders); BENCH_ROUNDS (3).
 */
const SCALE = positiveInteger('BENCH_EOD_SCALE') ?? 1;
const ACCOUNTS = (positiveInteger('BENCH_EOD_ACCOUNTS') ?? 10_000) * SCALE;
const ORDERS = (positiveInteger('BENCH_EOD_ORDERS') ?? 100_000) * SCALE;
const ROUNDS = positiveInteger('BENCH_ROUNDS') ?? 3;
const CONCURRENCY = String(positiveInteger('BENCH_EOD_CONCURRENCY') ?? 8);
const SEMI_SPACE_MB = Number(process.env.BENCH_EOD_SEMI_SPACE_MB ?? 16);
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
    const memory = new Map<string, ProcessMemory>([[api.name, startedMemory(api.pid)]]);
    const workerEnv = { ...env, WORKER_QUEUES: 'eod', WORKER_CONCURRENCY_EOD: CONCURRENCY };
    // As docker-compose runs the eod pool (NODE_OPTIONS there); BENCH_EOD_SEMI_SPACE_MB=0 runs V8's default.
    const workerArgv = SEMI_SPACE_MB > 0 ? [...CHILD_EXEC_ARGV, `--max-semi-space-size=${SEMI_SPACE_MB}`] : CHILD_EXEC_ARGV;
    const first = await h.startWorker('eod-worker-1', workerEnv, workerArgv);
    servers.push(first);
    memory.set(first.name, startedMemory(first.pid));

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
    for (const workers of [1, 2]) {
      if (workers === 2) {
        const second = await h.startWorker('eod-worker-2', workerEnv, workerArgv);
        servers.push(second);
        memory.set(second.name, startedMemory(second.pid));
      }
      const sides: { candidate: BatchRound[]; baseline: BatchRound[] } = { candidate: [], baseline: [] };
      const cpu = new Map<string, number>();
      const waits = new Map<string, number>();
      for (let round = 0; round <= ROUNDS; round++) {
        const before = cpuMark(servers);
        const postgresBefore = cpuSecondsByName(['postgres']);
        const c = await candidate(api, token, pool, dates.next().value!, waits);
        const after = cpuMark(servers);
        after.set('postgres', cpuSecondsSince(postgresBefore, 'postgres'));
        const b = await baseline(pool, group.id, dates.next().value!);
        // Round 0 is unmeasured: JIT, plans and the buffer cache.
        if (round === 0) {
          waits.clear();
          continue;
        }
        for (const [name, seconds] of after) cpu.set(name, (cpu.get(name) ?? 0) + seconds - (before.get(name) ?? 0));
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
      const processes = Object.fromEntries(
        servers.map((s) => [
          s.name,
          {
            started_rss_mib: round1(memory.get(s.name)!.startedKib / 1024),
            peak_rss_mib: round1(statusKib(s.pid, 'VmHWM') / 1024),
            peak_is_of_run: memory.get(s.name)!.peakReset,
            service_cpu_s: round1(cpu.get(s.name) ?? 0),
          },
        ]),
      );
      const postgresCpu = round1(cpu.get('postgres') ?? 0);
      const topWaits = Object.fromEntries([...waits].sort((x, y) => y[1] - x[1]).slice(0, 6));
      progress(`${workers} worker(s): processes ${JSON.stringify(processes)}, postgres cpu ${postgresCpu} s`);
      progress(`${workers} worker(s): database wait samples while the service ran ${JSON.stringify(topWaits)}`);
      figures.push(
        h.record({
          name: `end of day over ${fmt(ACCOUNTS)} accounts and ${fmt(ORDERS)} open orders, ${workers} eod worker process(es) vs set-based SQL via pg (accounts/s)`,
          unit: 'accounts',
          size: ACCOUNTS,
          connections: workers,
          ...sides,
          detail: {
            accounts: ACCOUNTS,
            orders: ORDERS,
            concurrency_per_worker: Number(CONCURRENCY),
            processes,
            postgres_cpu_s: postgresCpu,
            waits: topWaits,
          },
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

async function candidate(
  api: Server,
  token: string,
  pool: Pool,
  tradingDate: string,
  waits: Map<string, number>,
): Promise<BatchRound> {
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
      const phases = await pool.query<{ start_ms: number; chunks_ms: number; finish_ms: number }>(PHASES, [started.id]);
      return {
        ms,
        failures: run.accounts_failed,
        detail: { status: run.status, swaps: run.swaps_booked, done: run.accounts_done, ...phases.rows[0] },
      };
    }
    const active = await pool.query<{ wait: string; n: number }>(WAITS);
    for (const w of active.rows) waits.set(w.wait, (waits.get(w.wait) ?? 0) + w.n);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Where a run's time went: from the request to its fan-out (the start job), from there to the
 * last chunk's commit (snapshots carry their transaction's start, so this is a little short),
 * and from there to the run's completion (the finishing job).
 */
const PHASES = `select round(extract(epoch from r.started_at - r.created_at) * 1000)::int as start_ms,
       round(extract(epoch from max(s.created_at) - r.started_at) * 1000)::int as chunks_ms,
       round(extract(epoch from r.finished_at - max(s.created_at)) * 1000)::int as finish_ms
  from eod_runs r join account_daily_snapshots s on s.trading_date = r.trading_date
 where r.id = $1 group by r.id`;

/** What the database's other active sessions wait on right now (`running` when on CPU). */
const WAITS = `select coalesce(wait_event_type || ':' || wait_event, 'running') as wait, count(*)::int as n
  from pg_stat_activity where datname = current_database() and state = 'active' and pid <> pg_backend_pid()
 group by 1`;

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

interface ProcessMemory {
  startedKib: number;
  /** Whether VmHWM was reset once the process was up, so it is the peak of the rounds alone. */
  peakReset: boolean;
}

/**
 * A started process's RSS, then its peak reset (`5` into clear_refs, Linux 4.0+): the peak read
 * after the rounds is then theirs, not start-up's (compiling TypeScript peaks well above).
 */
function startedMemory(pid: number): ProcessMemory {
  const startedKib = statusKib(pid, 'VmRSS');
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return { startedKib, peakReset: true };
  } catch {
    return { startedKib, peakReset: false };
  }
}

/** CPU seconds so far of each server process, by name. */
function cpuMark(servers: Server[]): Map<string, number> {
  return new Map<string, number>(servers.map((s) => [s.name, processCpuSeconds(s.pid) ?? 0]));
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

function statusKib(pid: number, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : NaN;
}

function positiveInteger(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}
