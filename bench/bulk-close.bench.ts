import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import { Redis } from 'ioredis';
import type { Pool, PoolClient } from 'pg';

/** A pool or a checked-out client: both run a statement. */
type Queryable = Pick<Pool, 'query'>;
import { orderOfRow } from '../src/domain/orders/order-view';
import {
  openTicketsStatement,
  runItemsStatement,
  runTicketStatement,
  type RunItemRow,
  type RunTicketRow,
} from '../src/domain/orders/bulk-close';
import { closeStatement } from '../src/domain/orders/close-statements';
import { NO_CHARGES, orderView } from '../src/domain/orders/order-view';
import { closingPrice, profitInQuoteCurrency, withSpread } from '../src/domain/prices/trading-math';
import { CLOSE_HOLDER_AND_TERMS } from '../src/domain/orders/orders.queries';
import type { Quote } from '../src/domain/prices/quote-store';
import { D, dec, money, type Dec } from '../src/platform/decimal';
import { pgPlaceholders } from '../src/platform/named-sql';
import { cpuSecondsByName, machineCpu, processCpuSeconds, usedBetween, type CpuMark, type MachineCpu } from './lib/cpu';
import { CHILD_EXEC_ARGV, fmt, type BatchRound, type Figure, type Harness, type Server } from './lib/harness';
import {
  BASE_DATABASE_URL,
  BENCH_ADMIN as ADMIN,
  benchPool,
  dropDatabase,
  median,
  progressOf,
  request,
  withDatabase,
} from './lib/bench-kit';
import { call } from './lib/load';
import { SPEED_UP } from './lib/figures-table';

/**
 * Bulk close (POST /orders/bulk-close): BullMQ jobs each carrying a chunk of the run's tickets,
 * each ticket closed in its own transaction, and the HTTP answer once all are done.
 *
 * 1. Tickets per second closing 1,000 open orders of one account, with one and with two
 *    worker processes (WORKER_CONCURRENCY jobs each), against a baseline that runs the same
 *    per-ticket SQL (the statements closeRunTicket and closeReadOrder send, built by the same
 *    builders, in the same order, plus the same quote read from Redis) straight through `pg`,
 *    with as many tickets in flight as the workers have jobs in flight. Both sides also
 *    record the run and its items first and complete and read it back last, as the route does.
 *    The ratio is the share of the plain transactions' rate that the service reaches (aim: at
 *    least 0.7).
 * 2. The time of the HTTP answer for a bulk close of 100 tickets with one worker process.
 * 3. 20 accounts of 100 tickets each, their 20 bulk closes sent at once, with one and with two
 *    worker processes, against the same 2,000 per-ticket transactions at 8 and 16 in flight;
 *    and the scaling figure: the service's speed-up from one to two worker processes over the
 *    baseline's from 8 to 16 in flight (aim: at least 0.8).
 *
 * The service runs as it does in production, from compiled TypeScript (AS_COMPILED), as one
 * API child (ROLE=api) and worker children (ROLE=worker, servers/worker.ts) on a database and
 * queue prefix of this run's own, both removed at the end. Orders are inserted with SQL as
 * openMarketOrder writes them (opening 1,000 through the API would take minutes: each open
 * reads all the account's open orders), fresh ones before every batch. The baseline runs in
 * this process: its `load cpu` is the baseline client itself.
 *
 * Rounds: each candidate batch is followed by its baseline batch. The 1-worker rounds (1,000
 * and 100 tickets) run first; then a second worker process starts, warms up, and stays for
 * the 2-worker rounds (restarting it per round would measure a cold JIT every time).
 *
 * Each round also records where the CPU went (per process, from /proc: workers, API, this
 * process, the Postgres backends of this database, Redis, and what other processes on the
 * machine used) and, for the candidate, the phases of the run from the timestamps the service
 * writes. A machine busy with other work makes the rates meaningless: the bench says so.
 */
const progress = progressOf('bulk-close');
const TICKETS = 1000;
const SMALL = 100;
/** Tickets a freshly started worker process closes before its first measured batch (JIT, pools, caches). */
const WARMUP = 500;
/** The scaling figure: this many accounts close at once, each with this many tickets. */
const MANY_ACCOUNTS = 20;
const MANY_TICKETS = 100;
const CONCURRENCY = 8;
const ROUNDS = positiveInteger('BENCH_ROUNDS') ?? 3;
const SYMBOL = 'EURUSD';
const QUOTE = { bid: 1.1, ask: 1.1002 };
const VOLUME = '0.01';
const CONTRACT_SIZE = 100000;
/** Far longer than a batch takes; a 202 (still running) fails the bench instead of being timed. */
const BULK_CLOSE_WAIT_MS = 120_000;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Extra node flags for the children, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to see where their time goes. */

interface Sides {
  candidate: BatchRound[];
  baseline: BatchRound[];
}

interface BenchAccount {
  login: number;
  accountId: string;
}

interface Ctx {
  api: Server;
  database: string;
  pool: Pool;
  redis: Redis;
  quotesKey: string;
  /** The first closes alone (the 1,000- and 100-ticket figures); all of them close at once for the scaling figure. */
  accounts: BenchAccount[];
  token(): Promise<string>;
}

export async function run(h: Harness): Promise<Figure[]> {
  const tag = randomBytes(4).toString('hex');
  const database = `trading_bench_bulk_${tag}`;
  const prefix = `bench-bulk-${tag}`;
  const env = {
    BENCH_DATABASE_URL: withDatabase(BASE_DATABASE_URL, database),
    BENCH_QUEUE_PREFIX: prefix,
    BENCH_LOG_LEVEL: 'warn',
  };
  const startWorker = (n: number) => h.startWorker(`worker${n}`, { ...env, WORKER_CONCURRENCY: String(CONCURRENCY) });

  const servers: Server[] = [];
  const pool = benchPool(env.BENCH_DATABASE_URL, 2 * CONCURRENCY);
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  try {
    // The API creates and migrates the database; workers start after it, so nobody races to migrate.
    const api = await h.start({
      entry: 'servers/service.ts',
      name: 'api',
      execArgv: CHILD_EXEC_ARGV,
      env: {
        ...env,
        BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
        BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
        BULK_CLOSE_WAIT_MS: String(BULK_CLOSE_WAIT_MS),
      },
    });
    servers.push(api);
    const worker1 = await startWorker(1);
    servers.push(worker1);
    await redis.connect();
    const ctx = await setUp(api, database, pool, redis, `${prefix}:quotes`);

    // Candidate and baseline alternate round by round, so drift on the machine hits both alike.
    const interleave = async (
      label: string,
      workers: Server[],
      size: number,
      accounts = ctx.accounts.slice(0, 1),
    ): Promise<Sides> => {
      const sides: Sides = { candidate: [], baseline: [] };
      const inFlight = workers.length * CONCURRENCY;
      const perAccount = size / accounts.length;
      for (let round = 1; round <= ROUNDS; round++) {
        const c = await candidateRound(ctx, accounts, perAccount, workers);
        const b = await baselineRound(ctx, accounts, perAccount, inFlight);
        sides.candidate.push(c);
        sides.baseline.push(b);
        progress(
          `${label}, round ${round}/${ROUNDS}: ${fmt(size / (c.ms / 1000))} tickets/s (${fmt(c.ms)} ms), ` +
            `baseline ${fmt(size / (b.ms / 1000))} tickets/s (${fmt(b.ms)} ms) at ${inFlight} in flight`,
        );
      }
      return sides;
    };

    const first = ctx.accounts.slice(0, 1);
    progress('warm-up, 1 worker process');
    await candidateRound(ctx, first, WARMUP, [worker1]);
    await baselineRound(ctx, first, WARMUP, CONCURRENCY);
    const one = await interleave(`${fmt(TICKETS)} tickets, 1 worker process`, [worker1], TICKETS);
    const small = await interleave(`${SMALL} tickets, 1 worker process`, [worker1], SMALL);
    const manyLabel = `${MANY_ACCOUNTS} accounts x ${MANY_TICKETS} tickets at once`;
    const many1 = await interleave(`${manyLabel}, 1 worker process`, [worker1], MANY_ACCOUNTS * MANY_TICKETS, ctx.accounts);

    // Started once and kept: a worker restarted for every round would be measured with cold JIT each time.
    const worker2 = await startWorker(2);
    servers.push(worker2);
    progress('warm-up, 2 worker processes');
    await candidateRound(ctx, first, 2 * WARMUP, [worker1, worker2]);
    await baselineRound(ctx, first, WARMUP, 2 * CONCURRENCY);
    const two = await interleave(`${fmt(TICKETS)} tickets, 2 worker processes`, [worker1, worker2], TICKETS);
    const many2 = await interleave(
      `${manyLabel}, 2 worker processes`,
      [worker1, worker2],
      MANY_ACCOUNTS * MANY_TICKETS,
      ctx.accounts,
    );

    await checkBooks(ctx);
    const report = (
      name: string,
      size: number,
      connections: number,
      sides: Sides,
      workerProcesses: number,
      accounts = 1,
    ): Figure => {
      const candidate = cpuPerTicket(sides.candidate, size);
      const baseline = cpuPerTicket(sides.baseline, size);
      const figure = h.record({
        name,
        unit: 'tickets',
        size,
        connections,
        ...sides,
        detail: {
          worker_processes: workerProcesses,
          worker_concurrency: CONCURRENCY,
          accounts,
          tickets_per_account: size / accounts,
          statements_per_ticket:
            'one select without locks (item and order), 2 Redis HMGETs at once (the symbol, the converting symbols), one statement that closes, books, appends the ledger row and the event, and decides the item; account, group, instruments, group rows and conversion instruments once per run',
          cpu_ms_per_ticket: { candidate, baseline },
        },
      });
      explain(candidate, baseline);
      return figure;
    };
    return [
      report(
        `bulk close ${fmt(TICKETS)} tickets, tickets/s: 1 worker process x ${CONCURRENCY} jobs vs the same transactions via pg, ${CONCURRENCY} in flight`,
        TICKETS,
        CONCURRENCY,
        one,
        1,
      ),
      report(
        `bulk close ${fmt(TICKETS)} tickets, tickets/s: 2 worker processes x ${CONCURRENCY} jobs vs the same transactions via pg, ${2 * CONCURRENCY} in flight`,
        TICKETS,
        2 * CONCURRENCY,
        two,
        2,
      ),
      report(
        `bulk close ${SMALL} tickets, HTTP answer (median ms): 1 worker process x ${CONCURRENCY} jobs vs the same transactions via pg, ${CONCURRENCY} in flight`,
        SMALL,
        CONCURRENCY,
        small,
        1,
      ),
      report(
        `bulk close ${manyLabel}, tickets/s: 1 worker process x ${CONCURRENCY} jobs vs the same transactions via pg, ${CONCURRENCY} in flight`,
        MANY_ACCOUNTS * MANY_TICKETS,
        CONCURRENCY,
        many1,
        1,
        MANY_ACCOUNTS,
      ),
      report(
        `bulk close ${manyLabel}, tickets/s: 2 worker processes x ${CONCURRENCY} jobs vs the same transactions via pg, ${2 * CONCURRENCY} in flight`,
        MANY_ACCOUNTS * MANY_TICKETS,
        2 * CONCURRENCY,
        many2,
        2,
        MANY_ACCOUNTS,
      ),
      scaling(h, manyLabel, many1, many2),
    ];
  } finally {
    // Children first: the database cannot be dropped while they hold connections.
    await Promise.all(servers.map((s) => s.stop()));
    await pool.end().catch(() => undefined);
    await removeKeys(redis, prefix).catch((err: unknown) => progress(`could not remove Redis keys ${prefix}:*: ${String(err)}`));
    redis.disconnect();
    await dropDatabase(database).catch((err: unknown) => progress(`could not drop database ${database}: ${String(err)}`));
  }
}

/**
 * How much a second worker process adds when several accounts close at once, against how much
 * doubling the plain transactions in flight adds: per round, the service's speed-up (tickets/s
 * with 2 worker processes / with 1) is the candidate and the baseline's (16 in flight / 8) the
 * baseline, so the ratio is the share of the baseline's scaling the service reaches (aim 0.8).
 * Recorded as a batch of one unit, so the rates read as speed-ups (unit ×).
 */
function scaling(h: Harness, label: string, one: Sides, two: Sides): Figure {
  const speedUp = (side: keyof Sides) =>
    two[side].map((r, i): BatchRound => ({
      ms: (1000 * r.ms) / (one[side][i]?.ms ?? NaN),
      failures: (r.failures ?? 0) + (one[side][i]?.failures ?? 0),
    }));
  const figure = h.record({
    name: `bulk close ${label}, scaling from 1 to 2 worker processes (tickets/s 2 / 1) vs the same transactions via pg from ${CONCURRENCY} to ${2 * CONCURRENCY} in flight`,
    unit: SPEED_UP,
    size: 1,
    connections: 2 * CONCURRENCY,
    candidate: speedUp('candidate'),
    baseline: speedUp('baseline'),
  });
  progress(
    `scaling: service ${figure.candidateRps.toFixed(2)}x, baseline ${figure.baselineRps.toFixed(2)}x, ratio ${figure.ratio.toFixed(2)}`,
  );
  return figure;
}

// ---------------------------------------------------------------------------------------------
// Setup, through the API as a broker would do it

async function setUp(api: Server, database: string, pool: Pool, redis: Redis, quotesKey: string): Promise<Ctx> {
  let token = '';
  let expiresAt = 0;
  const fresh = async (): Promise<string> => {
    if (Date.now() < expiresAt - 60_000) return token;
    const pair = await request<{ access_token: string; expires_in: number }>(
      api,
      'POST',
      '/api/admin/users/login',
      '',
      ADMIN,
      200,
    );
    token = pair.access_token;
    expiresAt = Date.now() + pair.expires_in * 1000;
    return token;
  };
  const as = async <T>(method: string, path: string, body: unknown, status: number | number[]) =>
    request<T>(api, method, path, await fresh(), body, status);

  const tag = randomBytes(4).toString('hex');
  const group = await as<{ id: string }>('POST', '/groups', { name: `bench-${tag}`, default_leverage: 100 }, 201);
  await as(
    'POST',
    '/api/platform/instruments',
    { symbol: SYMBOL, digits: 5, contract_size: CONTRACT_SIZE, base_currency: 'EUR', quote_currency: 'USD' },
    [201, 409],
  );
  await as('POST', '/simulator/quotes', { symbol: SYMBOL, ...QUOTE }, 200);
  const customer = await as<{ id: string }>(
    'POST',
    '/api/crm/customers',
    { email: `bench-${tag}@bench.test`, password: 'bench-customer-password', first_name: 'Bench', last_name: 'Customer' },
    201,
  );
  const accounts: BenchAccount[] = [];
  for (let n = 0; n < MANY_ACCOUNTS; n++) {
    const opened = await as<{ login: number }>(
      'POST',
      `/api/crm/customers/${customer.id}/accounts`,
      { kind: 'live', group_id: group.id },
      201,
    );
    await as('POST', `/api/backoffice/accounts/${opened.login}/deposits`, { amount: 1_000_000 }, 201);
    const { rows } = await pool.query<{ id: string }>('select id from accounts where login = $1', [opened.login]);
    accounts.push({ login: opened.login, accountId: rows[0]!.id });
  }
  const account = accounts[0]!;
  // One order the ordinary way, closed again: proves the market trades and warms the code path.
  const order = await as<{ order: number }>(
    'POST',
    '/orders',
    { login: account.login, symbol: SYMBOL, cmd: 0, volume: 0.01 },
    201,
  );
  await as('POST', `/orders/${order.order}/close`, undefined, 200);

  return { api, database, pool, redis, quotesKey, accounts, token: fresh };
}

/**
 * `count` open orders of the account, written as openMarketOrder writes them (its order.opened
 * events aside, which closing does not read): alternately buys at the ask and sells at the bid.
 */
async function openOrders(ctx: Ctx, account: BenchAccount, count: number): Promise<void> {
  const open = await ctx.pool.query<{ n: string }>(`select count(*) as n from orders where account_id = $1 and status = 'open'`, [
    account.accountId,
  ]);
  if (open.rows[0]!.n !== '0') throw new Error(`${open.rows[0]!.n} orders are still open from the last batch`);
  await ctx.pool.query(
    `insert into orders (id, created_at, updated_at, account_id, login, symbol, cmd, volume, open_price, contract_size, status)
     select gen_random_uuid(), now(), now(), $1, $2, $3, g % 2, $4, case when g % 2 = 0 then $5::numeric else $6::numeric end, $7, 'open'
       from generate_series(1, $8::int) as g`,
    [account.accountId, account.login, SYMBOL, VOLUME, String(QUOTE.ask), String(QUOTE.bid), String(CONTRACT_SIZE), count],
  );
}

// ---------------------------------------------------------------------------------------------
// Candidate: POST /orders/bulk-close, timed until the 200 answer

/** Bulk closes of `perAccount` tickets for each of `accounts`, all sent at once, timed until the last 200 answer. */
async function candidateRound(ctx: Ctx, accounts: BenchAccount[], perAccount: number, workers: Server[]): Promise<BatchRound> {
  for (const account of accounts) await openOrders(ctx, account, perAccount);
  const token = await ctx.token();
  const mark = markCpu();
  const sent = new Date();
  const t0 = performance.now();
  const replies = await Promise.all(
    accounts.map((account) =>
      call(ctx.api.url('/orders/bulk-close'), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: { login: account.login, comment: 'bench' },
      }),
    ),
  );
  const ms = performance.now() - t0;
  const answered = new Date();
  const cpu = await cpuSince(ctx, mark, { api: [ctx.api], workers });
  let closed = 0;
  const runIds: string[] = [];
  for (const reply of replies) {
    if (reply.status !== 200) throw new Error(`POST /orders/bulk-close answered ${reply.status}: ${reply.body.slice(0, 300)}`);
    const result = JSON.parse(reply.body) as { id: string; closed: number[]; failed: Array<{ ticket: number; reason: string }> };
    if (result.failed.length > 0)
      progress(`candidate: ${result.failed.length} tickets failed, e.g. ${JSON.stringify(result.failed[0])}`);
    closed += result.closed.length;
    runIds.push(result.id);
  }

  // Where the time went, from the timestamps the service wrote (one machine, one clock), over all runs of the round.
  const { rows } = await ctx.pool.query<{ created_at: Date; completed_at: Date; first: Date; last: Date }>(
    `select min(r.created_at) as created_at, max(r.completed_at) as completed_at, min(i.finished_at) as first, max(i.finished_at) as last
       from bulk_close_runs r join bulk_close_items i on i.run_id = r.id where r.id = any($1)`,
    [runIds],
  );
  const run = rows[0]!;
  const between = (a: Date, b: Date) => b.getTime() - a.getTime();
  return {
    ms,
    failures: accounts.length * perAccount - closed,
    loadCpu: cpu.bench_s / cpu.wall_s,
    detail: {
      phases_ms: {
        request_to_run_recorded: between(sent, run.created_at),
        run_recorded_to_first_ticket_closed: between(run.created_at, run.first),
        first_to_last_ticket_closed: between(run.first, run.last),
        last_ticket_to_run_completed: between(run.last, run.completed_at),
        run_completed_to_answer: between(run.completed_at, answered),
      },
      cpu_s: cpu,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Baseline: the same statements straight through pg, `concurrency` transactions in flight

/**
 * The runs recorded as the route does (all at once when there are several), then every
 * ticket's transaction with `concurrency` in flight, the runs' tickets taken in turn (one
 * account's tickets queue on its row, so this order is the baseline at its best), then the
 * runs completed and read back.
 */
async function baselineRound(ctx: Ctx, accounts: BenchAccount[], perAccount: number, concurrency: number): Promise<BatchRound> {
  for (const account of accounts) await openOrders(ctx, account, perAccount);
  const mark = markCpu();
  const t0 = performance.now();
  const runs = await Promise.all(accounts.map((account) => plainStart(ctx, account)));
  const work: Array<{ runId: string; ticket: string }> = [];
  for (let i = 0; i < perAccount; i++)
    for (const run of runs) if (run.tickets[i]) work.push({ runId: run.runId, ticket: run.tickets[i]! });
  let next = 0;
  let failures = 0;
  const lane = async (): Promise<void> => {
    while (next < work.length) {
      const { runId, ticket } = work[next++]!;
      if ((await plainCloseRunTicket(ctx, runId, ticket)) !== 'closed') failures++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const results = await Promise.all(
    runs.map(async ({ runId }) => {
      await plainFinish(ctx, runId);
      return plainResult(ctx, runId);
    }),
  );
  const ms = performance.now() - t0;
  const cpu = await cpuSince(ctx, mark, {});
  const closed = results.reduce((sum, r) => sum + r.closed, 0);
  const size = accounts.length * perAccount;
  if (closed !== size) failures = Math.max(failures, size - closed);
  return { ms, failures, loadCpu: cpu.bench_s / cpu.wall_s, detail: { cpu_s: cpu } };
}

/** startBulkClose: the account, then one transaction recording the run and an item per open ticket. */
async function plainStart(ctx: Ctx, bench: BenchAccount): Promise<{ runId: string; tickets: string[] }> {
  const account = await ctx.pool.query(
    'select a.*, g.name as group_name, g.currency as group_currency from accounts a left join trading_groups g on g.id = a.group_id where a.login = $1 limit 1',
    [bench.login],
  );
  if (account.rowCount === 0) throw new Error('no such account');
  return inTransaction(ctx, async (c) => {
    const read = openTicketsStatement({ account_id: account.rows[0].id });
    const open = await c.query<{ ticket: string }>(pgPlaceholders(read.sql), read.values);
    const runId = randomUUID();
    const now = new Date();
    await c.query(
      `insert into bulk_close_runs (id, created_at, updated_at, login, comment, status, requested_by, completed_at)
       values ($1, $2, $2, $3, $4, 'running', null, null)`,
      [runId, now, bench.login, 'bench'],
    );
    const tickets = open.rows.map((r) => r.ticket);
    await c.query(`insert into bulk_close_items (run_id, ticket, status) select $1, unnest($2::bigint[]), 'pending'`, [
      runId,
      tickets,
    ]);
    return { runId, tickets };
  });
}

/**
 * closeRunTicket and closeReadOrder, statement for statement: the one read of the item and
 * its order (runTicketStatement), the run's pricing terms once per run (as RunTermsCache does),
 * the Redis HMGETs of the symbol's and the converting symbols' quotes, then the one closing
 * statement the service runs (closeStatement, bound by name), its event the service's orderView.
 */
async function plainCloseRunTicket(ctx: Ctx, runId: string, ticket: string): Promise<string> {
  const c = ctx.pool;
  const read = runTicketStatement({ run_id: runId, ticket });
  const row = (await c.query<RunTicketRow>(pgPlaceholders(read.sql), read.values)).rows[0];
  if (!row) throw new Error(`run ${runId} has no ticket ${ticket}`);
  if (row.item_status !== 'pending') return row.item_status;
  if (row.ticket === null || row.account_id === null) return failItem(c, runId, ticket, `Order ${ticket} does not exist`);
  const order = orderOfRow({ ...row, ticket: row.ticket });
  if (order.status === 'closed') return closeItem(c, runId, ticket);
  const { account, instruments, groupRows, convertible } = await plainTerms(ctx, runId, row.account_id, order.symbol);
  // PricingContext.load: the symbol's quote and the converting symbols' quotes, two HMGETs at once.
  const [[rawQuote], rates] = await Promise.all([
    ctx.redis.hmget(ctx.quotesKey, order.symbol),
    convertible.length ? ctx.redis.hmget(ctx.quotesKey, ...convertible.map((i) => i.symbol as string)) : [],
  ]);

  const instrument = instruments.find((i) => i.symbol === order.symbol);
  if (!instrument) return failItem(c, runId, ticket, `Unknown instrument ${order.symbol}`);
  const groupRow = groupRows.find((r) => r.symbol === order.symbol);
  if (groupRow && !groupRow.enabled) return failItem(c, runId, ticket, `${order.symbol} is not tradable in this account's group`);
  if (!rawQuote) return failItem(c, runId, ticket, `No quote for ${order.symbol}`);
  const quote = withSpread(JSON.parse(rawQuote) as Quote, dec(groupRow?.spread ?? 0), instrument.digits);
  const price = closingPrice(order.cmd, quote);
  const raw = profitInQuoteCurrency(order.cmd, dec(order.openPrice), price, dec(order.volume), dec(order.contractSize));
  const rate = conversionRate(instrument.quote_currency, account.currency, convertible, rates);
  if (!rate) return failItem(c, runId, ticket, `No quote to convert ${instrument.quote_currency} into ${account.currency}`);
  const profit = money(raw.times(rate));

  const now = new Date();
  const closed = {
    ...orderView(order, NO_CHARGES),
    status: 'closed' as const,
    closed_at: now.toISOString(),
    close_price: Number(price.toFixed()),
    profit: profit.toFixed(2),
    close_reason: 'bulk_close',
  };
  const { sql, values } = closeStatement({
    ticket,
    closed_at: now,
    close_price: price.toFixed(),
    profit: profit.toFixed(2),
    // The bench's group charges no commission.
    commission: '0.00',
    reason: 'bulk_close',
    event: JSON.stringify(closed),
    bulk_close_run_id: runId,
  });
  await c.query(pgPlaceholders(sql), values);
  return 'closed';
}

/** RunTermsCache: the account and its pricing terms (instruments, group rows, conversion instruments), read once per run and symbol. */
const termsByRun = new Map<string, Promise<PlainTerms>>();

interface PlainTerms {
  account: any;
  instruments: any[];
  groupRows: any[];
  convertible: any[];
}

function plainTerms(ctx: Ctx, runId: string, accountId: string, symbol: string): Promise<PlainTerms> {
  const key = `${runId}:${accountId}:${symbol}`;
  let terms = termsByRun.get(key);
  if (!terms) {
    terms = (async () => {
      const c = ctx.pool;
      // The service's one read of a close's account and its pricing terms, through plain `pg`.
      const read = CLOSE_HOLDER_AND_TERMS.bind({ account_id: accountId, symbol });
      const terms = (await c.query(pgPlaceholders(read.sql), read.values)).rows;
      const account = { currency: terms[0].holder_currency };
      const instruments = terms.filter((r) => r.wanted);
      const groupRows = terms
        .filter((r) => r.wanted && r.gi_group_id !== null)
        .map((r) => ({ symbol: r.symbol, enabled: r.gi_enabled, spread: r.gi_spread }));
      const convertible = terms.filter((r) => r.joining);
      return { account, instruments, groupRows, convertible };
    })();
    termsByRun.set(key, terms);
  }
  return terms;
}

async function closeItem(c: Queryable, runId: string, ticket: string, at = new Date()): Promise<string> {
  await c.query(`update bulk_close_items set status = 'closed', finished_at = $1 where run_id = $2 and ticket = $3`, [
    at,
    runId,
    ticket,
  ]);
  return 'closed';
}

async function failItem(c: Queryable, runId: string, ticket: string, reason: string): Promise<string> {
  await c.query(
    `update bulk_close_items set status = 'failed', reason = $1, finished_at = $2 where run_id = $3 and ticket = $4`,
    [reason, new Date(), runId, ticket],
  );
  return 'failed';
}

/** CurrencyConverter.rate: direct or inverted symbol at the mid price, else crossed through USD. */
function conversionRate(
  from: string,
  to: string,
  instruments: Array<{ symbol: string; base_currency: string; quote_currency: string }>,
  quotes: Array<string | null>,
): Dec | undefined {
  if (from === to) return new D(1);
  const legs = new Map<string, Dec>();
  instruments.forEach((i, n) => {
    const raw = quotes[n];
    if (!raw) return;
    const q = JSON.parse(raw) as Quote;
    const mid = dec(q.bid).plus(dec(q.ask)).div(2);
    legs.set(`${i.base_currency}>${i.quote_currency}`, mid);
    if (!legs.has(`${i.quote_currency}>${i.base_currency}`))
      legs.set(`${i.quote_currency}>${i.base_currency}`, new D(1).div(mid));
  });
  const direct = legs.get(`${from}>${to}`);
  if (direct) return direct;
  const first = legs.get(`${from}>USD`);
  const second = legs.get(`USD>${to}`);
  return first && second ? first.times(second) : undefined;
}

/** finishRun: the run locked, undecided items failed, the run completed. */
async function plainFinish(ctx: Ctx, runId: string): Promise<void> {
  await inTransaction(ctx, async (c) => {
    await c.query('select * from bulk_close_runs where id = $1 limit 1 for update', [runId]);
    const now = new Date();
    await c.query(
      `update bulk_close_items set status = 'failed', reason = $1, finished_at = $2 where run_id = $3 and status = 'pending'`,
      ['The close job failed after all retries', now, runId],
    );
    await c.query(`update bulk_close_runs set status = 'completed', completed_at = $1, updated_at = $1 where id = $2`, [
      now,
      runId,
    ]);
  });
}

/** bulkCloseResult: the run and its items, which the route answers with. */
async function plainResult(ctx: Ctx, runId: string): Promise<{ closed: number }> {
  await ctx.pool.query('select * from bulk_close_runs where id = $1 limit 1', [runId]);
  const read = runItemsStatement({ run_id: runId });
  const items = await ctx.pool.query<RunItemRow>(pgPlaceholders(read.sql), read.values);
  const body = JSON.stringify({
    closed: items.rows.filter((i) => i.status === 'closed').map((i) => Number(i.ticket)),
    failed: items.rows.filter((i) => i.status === 'failed').map((i) => ({ ticket: Number(i.ticket) })),
  });
  return { closed: (JSON.parse(body) as { closed: number[] }).closed.length };
}

async function inTransaction<T>(ctx: Ctx, work: (c: PoolClient) => Promise<T>): Promise<T> {
  const c = await ctx.pool.connect();
  try {
    await c.query('begin');
    const result = await work(c);
    await c.query('commit');
    return result;
  } catch (err) {
    await c.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

// ---------------------------------------------------------------------------------------------
// Where the CPU went during a batch

interface BatchMark {
  at: number;
  self: NodeJS.CpuUsage;
  machine: MachineCpu | undefined;
  processes: CpuMark;
}

// Node 24 names its main thread, and so the process's comm, "MainThread": without it the
// children were missing from the mark and their whole lifetime's CPU was counted to a batch.
const WATCHED = ['postgres', 'redis-server', 'node', 'MainThread'];

function markCpu(): BatchMark {
  return { at: performance.now(), self: process.cpuUsage(), machine: machineCpu(), processes: cpuSecondsByName(WATCHED) };
}

/**
 * CPU seconds since `mark`: the children by role, this process, the Postgres backends of this
 * run's database (and everything else Postgres did), Redis, and the machine as a whole.
 * "other" is what the machine did beyond all of that: other people's processes on a shared box.
 */
async function cpuSince(ctx: Ctx, mark: BatchMark, roles: Record<string, Server[]>) {
  const wall = (performance.now() - mark.at) / 1000;
  const self = process.cpuUsage(mark.self);
  const machine = machineCpu();
  const now = cpuSecondsByName(WATCHED);
  const ours = new Set(
    (await ctx.pool.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [ctx.database])).rows.map(
      (r) => r.pid,
    ),
  );
  // A child whose command name is not watched is read by pid; its mark is then zero as well.
  const used = (pid: number) =>
    now.has(pid)
      ? usedBetween(mark.processes, now, pid)
      : (processCpuSeconds(pid) ?? 0) - (mark.processes.get(pid)?.seconds ?? 0);
  const sum = (pids: number[]) => pids.reduce((total, pid) => total + used(pid), 0);
  const pidsNamed = (name: string) => [...now].filter(([, p]) => p.name === name).map(([pid]) => pid);
  const postgres = pidsNamed('postgres');
  const byRole = Object.fromEntries(
    Object.entries(roles).map(([role, servers]) => [`${role}_s`, sum(servers.map((s) => s.pid))]),
  );
  // Each process of a role with several, e.g. worker1_s and worker2_s: kept apart from the role sums.
  const byServer = Object.fromEntries(
    Object.values(roles)
      .filter((servers) => servers.length > 1)
      .flat()
      .map((s) => [`${s.name}_s`, round2(used(s.pid))]),
  );
  const bench = (self.user + self.system) / 1e6;
  const postgresOurs = sum(postgres.filter((pid) => ours.has(pid)));
  const postgresOther = sum(postgres.filter((pid) => !ours.has(pid)));
  const redis = sum(pidsNamed('redis-server'));
  const busy = machine && mark.machine ? machine.busy - mark.machine.busy : NaN;
  const accounted = Object.values(byRole).reduce((a, b) => a + b, 0) + bench + postgresOurs + redis;
  return {
    wall_s: round2(wall),
    ...mapValues(byRole, round2),
    ...byServer,
    bench_s: round2(bench),
    postgres_this_db_s: round2(postgresOurs),
    postgres_rest_s: round2(postgresOther),
    redis_s: round2(redis),
    machine_busy_s: round2(busy),
    machine_capacity_s: round2(wall * os.cpus().length),
    iowait_s: round2(machine && mark.machine ? machine.iowait - mark.machine.iowait : NaN),
    other_s: round2(busy - accounted - postgresOther),
  };
}

/** Median CPU milliseconds per ticket by process, from the rounds' cpu_s, and the share of the machine others used. */
function cpuPerTicket(rounds: BatchRound[], size: number) {
  const cpu = rounds.map((r) => (r.detail?.cpu_s ?? {}) as Record<string, number>);
  const per = (key: string) => round2(median(cpu.map((c) => ((c[key] ?? 0) * 1000) / size)));
  const parts = {
    api: per('api_s'),
    workers: per('workers_s'),
    this_process: per('bench_s'),
    postgres: per('postgres_this_db_s'),
    redis: per('redis_s'),
  };
  return {
    total: round2(Object.values(parts).reduce((a, b) => a + b, 0)),
    ...parts,
    others_share_of_machine: round2(median(cpu.map((c) => c.other_s / c.machine_capacity_s))),
  };
}

function explain(candidate: ReturnType<typeof cpuPerTicket>, baseline: ReturnType<typeof cpuPerTicket>): void {
  const lines = [
    `  CPU ms per ticket (median): service ${candidate.total} = workers ${candidate.workers} + api ${candidate.api} + ` +
      `postgres ${candidate.postgres} + redis ${candidate.redis}; plain ${baseline.total} = client ${baseline.this_process} + ` +
      `postgres ${baseline.postgres} + redis ${baseline.redis}`,
  ];
  const others = Math.max(candidate.others_share_of_machine, baseline.others_share_of_machine);
  if (others > 0.2) {
    lines.push(
      `  WARNING: processes outside this bench used ${Math.round(others * 100)}% of the machine's CPU during the rounds: ` +
        'rates and ratio are unreliable (CPU per ticket less so)',
    );
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);
}

// ---------------------------------------------------------------------------------------------
// Odds and ends

/** After all batches: every balance equals the sum of its ledger rows, and nothing is left open. */
async function checkBooks(ctx: Ctx): Promise<void> {
  const mismatches = await ctx.pool.query(
    `select a.login from accounts a left join ledger_entries l on l.account_id = a.id
      group by a.id having a.balance <> coalesce(sum(l.amount), 0)`,
  );
  if (mismatches.rowCount) throw new Error(`ledger out of balance for ${JSON.stringify(mismatches.rows)}`);
  const open = await ctx.pool.query(`select count(*) as n from orders where status = 'open'`);
  if (open.rows[0].n !== '0') throw new Error(`${open.rows[0].n} orders are still open`);
}

async function removeKeys(redis: Redis, prefix: string): Promise<void> {
  if (redis.status !== 'ready') return;
  let cursor = '0';
  do {
    const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length) await redis.del(...keys);
    cursor = nextCursor;
  } while (cursor !== '0');
}

function mapValues<T, U>(record: Record<string, T>, f: (value: T) => U): Record<string, U> {
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, f(v)]));
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

function positiveInteger(name: string): number | undefined {
  const value = Number(process.env[name]);
  return Number.isInteger(value) && value > 0 ? value : undefined;
}
