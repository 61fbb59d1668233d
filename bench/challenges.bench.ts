import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { signalTicks } from '../src/domain/prices/tick-signal';
import { ledgerInsertSql } from '../src/domain/ledger/ledger';
import { QuoteStore, quoteVersionKey } from '../src/domain/prices/quote-store';
import { JobProducer } from '../src/jobs/job-producer';
import { CHILD_EXEC_ARGV, fmt, type BatchRound, type Figure, type Harness, type Server } from './lib/harness';
import {
  BASE_DATABASE_URL,
  BENCH_ADMIN as ADMIN,
  benchPool,
  dropDatabase,
  progressOf,
  request,
  withDatabase,
} from './lib/bench-kit';

/**
 * Prop challenge rules on the engine's ticks: 10,000 prop accounts, each an
 * active challenge holding one open order (0.01 lot) on one of 20 symbols, so a tick of a
 * symbol moves 500 challenge accounts. Run as in production: an API child (ROLE=api) and one
 * worker child (ROLE=worker), compiled, on a database and queue prefix of this run's own.
 * Accounts, their `challenge_funding` rows (through the ledger module's own insert), orders
 * and challenge rows are written with SQL, as the API would have written them.
 *
 * 1. Ticks evaluated per second: 20 lanes, one per symbol, each moving its quote and waiting
 *    until the engine has evaluated the change (the challenge hook runs before a change counts
 *    as evaluated). The baseline, in alternate rounds of the same run, is the same ticks over
 *    the same accounts and orders with the challenges moved out of `active` (the engine still
 *    evaluates the margin of every account holding the symbol; the challenge hook finds none).
 * 2. The delay from a breaching quote (stored and signalled as the simulator does) to the
 *    failure being recorded (`decided_at` seen by a 2 ms poll), p50 and p99, each sample a
 *    challenge of its own holding a larger order, among the 10,000.
 */
const SYMBOLS = 20;
const CHALLENGES = Number(process.env.BENCH_PROP_CHALLENGES ?? 10_000);
/** At most 40: one 10-lot and one 5-lot breach per symbol. */
const SAMPLES = Math.min(40, Number(process.env.BENCH_PROP_SAMPLES ?? 40));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** Ticks per measured round, spread over the 20 symbols. */
const TICKS = Number(process.env.BENCH_PROP_TICKS ?? 200);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const symbolName = (i: number) => `${String.fromCharCode(65 + Math.floor(i / 26))}${String.fromCharCode(65 + (i % 26))}PUSD`;

/** Funds the accounts the `a` CTE returns, as startStage does: one challenge_funding row each. */
const FUNDING = ledgerInsertSql([
  {
    id: 'gen_random_uuid()',
    bookedAt: 'now()',
    accountId: 'a.id',
    kind: 'challenge_funding',
    amount: 'a.balance',
    balanceAfter: 'a.balance',
    referenceType: 'prop_challenge',
    referenceId: 'a.id::text',
    comment: "'bench funding'",
    from: 'a',
  },
]);

export async function run(h: Harness): Promise<Figure[]> {
  const tag = randomBytes(4).toString('hex');
  const database = `trading_bench_prop_${tag}`;
  const prefix = `bench-prop-${tag}`;
  const env = {
    BENCH_DATABASE_URL: withDatabase(BASE_DATABASE_URL, database),
    BENCH_QUEUE_PREFIX: prefix,
    BENCH_LOG_LEVEL: 'warn',
  };
  const servers: Server[] = [];
  const pool = benchPool(env.BENCH_DATABASE_URL, SYMBOLS + 2);
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  try {
    const api = await h.start({
      entry: 'servers/service.ts',
      name: 'api',
      execArgv: CHILD_EXEC_ARGV,
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
      { email: `bench-${tag}@bench.test`, password: 'bench-customer-password', first_name: 'Bench', last_name: 'Prop' },
      201,
    );
    const symbols = Array.from({ length: SYMBOLS }, (_, i) => symbolName(i));
    for (const symbol of symbols) {
      await as(
        'POST',
        '/api/platform/instruments',
        { symbol, digits: 4, contract_size: 1000, base_currency: symbol.slice(0, 3), quote_currency: 'USD' },
        [201, 409],
      );
      await as('POST', '/simulator/quotes', { symbol, bid: 1, ask: 1.0002 }, 200);
    }
    const phase = {
      name: 'Evaluation',
      profit_target_pct: 10,
      max_daily_loss_pct: 5,
      max_total_loss_pct: 10,
      total_loss_mode: 'trailing',
      min_trading_days: 3,
    };
    const program = await as<{ id: string }>(
      'POST',
      '/prop/programs',
      {
        name: `bench-${tag}`,
        currency: 'USD',
        initial_balance: 10000,
        group_id: group.id,
        profit_split_pct: 80,
        phases: [phase],
      },
      201,
    );

    progress(`writing ${fmt(CHALLENGES)} challenges holding 0.01 lot each on ${SYMBOLS} symbols, and ${SAMPLES} to breach`);
    // The first 20 samples hold 10 lots (10,000 units) of one symbol each: a fall of 0.06 loses
    // 600, over the 500 the daily rule allows, while the next 20 (5 lots) lose 300; those then
    // breach at a fall of 0.12. The 0.01-lot holders lose at most 1.20.
    const total = CHALLENGES + SAMPLES;
    await pool.query(
      `with a as (
         insert into accounts (id, created_at, updated_at, customer_id, kind, group_id, currency, balance)
         select gen_random_uuid(), now(), now(), $1, 'prop', $2, 'USD', 10000 from generate_series(1, $3::int)
         returning id, balance
       ), l as (${FUNDING})
       select count(*) from l`,
      [customer.id, group.id, total],
    );
    await pool.query(
      `with numbered as (
         select a.id, a.login, row_number() over (order by a.login) as n from accounts a where a.kind = 'prop' and a.group_id = $1
       ), o as (
         insert into orders (id, created_at, updated_at, account_id, login, symbol, cmd, volume, open_price, contract_size, status)
         select gen_random_uuid(), now(), now(), id, login, ($2::text[])[1 + ((n - 1) % $3)], 0,
                case when n > $4::int + $7::int then 5 when n > $4::int then 10 else 0.01 end, 1.0002, 1000, 'open'
           from numbered returning 1
       )
       insert into prop_challenges (id, created_at, updated_at, program_id, customer_id, account_id, login, phase, status,
              initial_balance, profit_target_pct, max_daily_loss_pct, max_total_loss_pct, total_loss_mode, min_trading_days,
              day_start_equity, day_start_date, high_water_mark)
       select gen_random_uuid(), now(), now(), $5, $6, id, login, 1, 'active', 10000, 10, 5, 10, 'trailing', 3,
              10000, (now() at time zone 'UTC')::date, 10000
         from numbered`,
      [group.id, symbols, SYMBOLS, CHALLENGES, program.id, customer.id, SYMBOLS],
    );
    await pool.query('analyze accounts; analyze orders; analyze prop_challenges');
    const samples = (
      await pool.query<{ id: string; symbol: string; volume: string }>(
        `select c.id, o.symbol, o.volume::text as volume from prop_challenges c join orders o on o.account_id = c.account_id
          where o.volume >= 5 and c.program_id = $1 order by o.volume desc, c.login`,
        [program.id],
      )
    ).rows;

    const worker = await h.startWorker('worker1', env);
    servers.push(worker);

    // One poller for every waiter, as in engine.bench.ts.
    const waiters: Array<{ list: string[]; deadline: number; resolve: () => void; reject: (e: Error) => void }> = [];
    let polling = false;
    const poll = async () => {
      polling = true;
      try {
        while (waiters.length > 0) {
          const [ver, done] = await Promise.all([
            redis.hmget(quoteVersionKey(prefix), ...symbols),
            redis.hmget(`${prefix}:engine:done`, ...symbols),
          ]);
          const behind = new Set(symbols.filter((_, i) => Number(ver[i] ?? 0) > Number(done[i] ?? 0)));
          for (let i = waiters.length - 1; i >= 0; i--) {
            const w = waiters[i]!;
            if (w.list.every((s) => !behind.has(s))) {
              waiters.splice(i, 1);
              w.resolve();
            } else if (Date.now() > w.deadline) {
              waiters.splice(i, 1);
              w.reject(new Error('ticks not evaluated in time'));
            }
          }
          await sleep(1);
        }
      } finally {
        polling = false;
      }
    };
    const evaluated = (list: string[], timeoutMs = 300_000) =>
      new Promise<void>((resolve, reject) => {
        waiters.push({ list, deadline: Date.now() + timeoutMs, resolve, reject });
        if (!polling) void poll();
      });

    const producer = new JobProducer(redis, prefix);
    const store = new QuoteStore(redis, prefix);
    const silent = pino({ level: 'silent' });
    const tick = async (symbol: string, bid: number) => {
      await store.set(symbol, String(round4(bid)), String(round4(bid + 0.0002)));
      await signalTicks({ jobs: producer, logger: silent }, [symbol]);
    };
    const tickRound = async (): Promise<BatchRound> => {
      const t0 = performance.now();
      await Promise.all(
        symbols.map(async (symbol) => {
          for (let i = 0; i < TICKS / SYMBOLS; i++) {
            await tick(symbol, i % 2 === 0 ? 1.0001 : 1);
            await evaluated([symbol]);
          }
        }),
      );
      return { ms: performance.now() - t0 };
    };
    // The baseline's challenges are out of `active` (`funded` is never evaluated), the candidate's back in.
    const setActive = (active: boolean) =>
      pool.query(`update prop_challenges set status = $1 where program_id = $2 and status = $3`, [
        active ? 'active' : 'funded',
        program.id,
        active ? 'funded' : 'active',
      ]);

    progress('warm-up');
    await tickRound();
    const candidate: BatchRound[] = [];
    const baseline: BatchRound[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      await setActive(true);
      candidate.push(await tickRound());
      await setActive(false);
      baseline.push(await tickRound());
      progress(
        `round ${r}/${ROUNDS}: ${fmt(TICKS / (candidate.at(-1)!.ms / 1000))} ticks/s with challenges, ${fmt(TICKS / (baseline.at(-1)!.ms / 1000))} without`,
      );
    }
    await setActive(true);
    const rate = h.record({
      name: `engine ticks evaluated/s, ${fmt(CHALLENGES)} active prop challenges holding open orders on ${SYMBOLS} symbols vs the same ticks with none active, ${SYMBOLS} in flight`,
      unit: 'ticks',
      size: TICKS,
      connections: SYMBOLS,
      candidate,
      baseline,
    });

    progress(`breach delays, ${samples.length} samples`);
    const delays: number[] = [];
    for (const sample of samples) {
      const started = performance.now();
      await tick(sample.symbol, Number(sample.volume) === 10 ? 0.9402 : 0.8802);
      for (;;) {
        const r = await pool.query(`select 1 from prop_challenges where id = $1 and decided_at is not null`, [sample.id]);
        if (r.rowCount) break;
        if (performance.now() - started > 60_000) throw new Error('failure not recorded');
        await sleep(2);
      }
      delays.push(performance.now() - started);
      await tick(sample.symbol, 1);
      await evaluated([sample.symbol]);
    }
    const failed = await pool.query<{ n: string }>(
      `select count(*)::text as n from prop_challenges where program_id = $1 and status = 'failed'`,
      [program.id],
    );
    const breach = stats(delays);
    process.stderr.write(
      `  challenges: ${JSON.stringify({ challenges: CHALLENGES, breach_to_failure_ms: breach, failed: Number(failed.rows[0]!.n) })}\n`,
    );
    await producer.close();
    return [rate];
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await pool.end();
    redis.disconnect();
    await dropDatabase(database);
  }
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
const progress = progressOf('challenges');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
