import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Pool, PoolClient } from 'pg';
import { openingParams, type NewMarketOrder } from '../src/domain/orders/open-order';
import { openStatements, type HoldingsAndTermsRow } from '../src/domain/orders/open-statements';
import { openingPrice, withSpread } from '../src/domain/prices/trading-math';
import { QuoteStore } from '../src/domain/prices/quote-store';
import { dec } from '../src/platform/decimal';
import { pgPlaceholders, type Statement } from '../src/platform/named-sql';
import { CHILD_EXEC_ARGV, fmt, type Figure, type Harness, type RunWindow, type Server } from './lib/harness';
import {
  BASE_DATABASE_URL,
  BENCH_ADMIN as ADMIN,
  benchCustomer,
  benchPool,
  dropDatabase,
  measureLoop,
  progressOf,
  request,
  withDatabase,
} from './lib/bench-kit';
import { call, measure, nextSeq, type LoadResult } from './lib/load';

/**
 * POST /orders, opening a market order: orders opened per second through the whole service
 * (auth, validation, the transaction that finds the caller's account by login and locks it, reads its
 * open positions and waiting pending orders, the pricing terms and the quotes, checks the free
 * margin and inserts the order with its order.opened event) against the same transaction sent
 * straight to Postgres through `pg` from this process, as many in flight on each side (aim: a
 * ratio of at least 0.5). The baseline sends the statements openMarketOrder sends, built by the
 * same openStatements and openingParams, and reads the quotes through the same QuoteStore
 * (symbols and joining instruments, two HMGETs at once, as PricingContext.load does); it prices
 * the order with the same spread and side rules but skips the free-margin arithmetic (the
 * accounts are funded far beyond what a run opens). Its pool has the service's size (10).
 *
 * The integrator here is a broker's trading front end: each customer opens orders on its own
 * live account with its own customer token, as a trader's app does. CUSTOMERS customers with
 * one live USD account each in one group (leverage 100); request n is customer n mod
 * CUSTOMERS, so CONNECTIONS requests in flight wait on no one else's account lock. Orders
 * alternate EURUSD (quoted in the account currency) and USDJPY (converted through its own
 * quote), buy and sell, 0.01 lots. Before every round of either side the orders opened so far
 * are deleted by SQL, so both sides see accounts holding as few open positions (the margin
 * check reads them all). The service runs as in production (ROLE=api, compiled, LOG_LEVEL
 * silent) on a database of this run's own, dropped at the end.
 */
const progress = progressOf('orders');
const CUSTOMERS = 32;
const CONNECTIONS = 16;
/** A round's ratio moves by ±15 % with the host here; nine of them hold the median to a few percent. */
const ROUNDS = 9;
const POOL_SIZE = 10;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const INSTRUMENTS = [
  { symbol: 'EURUSD', digits: 5, base: 'EUR', quote: 'USD', bid: 1.1, ask: 1.1002 },
  { symbol: 'USDJPY', digits: 3, base: 'USD', quote: 'JPY', bid: 150, ask: 150.02 },
] as const;

export interface Holder {
  customerId: string;
  token: string;
  account: { id: string; login: string };
}

/** Request `seq`: whose account, and which order. */
export function orderOf(holders: Holder[], seq: number): { holder: Holder; order: NewMarketOrder } {
  const holder = holders[seq % CUSTOMERS]!;
  const turn = Math.floor(seq / CUSTOMERS);
  return {
    holder,
    order: {
      login: Number(holder.account.login),
      symbol: INSTRUMENTS[turn % 2]!.symbol,
      cmd: Math.floor(turn / 2) % 2 === 0 ? 0 : 1,
      volume: 0.01,
    },
  };
}

export async function run(h: Harness): Promise<Figure[]> {
  const tag = randomBytes(4).toString('hex');
  const database = `trading_bench_orders_${tag}`;
  const prefix = `bench-orders-${tag}`;
  const databaseUrl = withDatabase(BASE_DATABASE_URL, database);
  const pool = benchPool(databaseUrl, POOL_SIZE);
  const redis = new Redis(REDIS_URL, { lazyConnect: true });
  let api: Server | undefined;
  try {
    api = await h.start({
      entry: 'servers/service.ts',
      name: 'api',
      execArgv: CHILD_EXEC_ARGV,
      env: {
        BENCH_DATABASE_URL: databaseUrl,
        BENCH_QUEUE_PREFIX: prefix,
        BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
        BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
      },
    });
    await redis.connect();
    const store = new QuoteStore(redis, prefix);
    const holders = await setUp(api, pool, tag);
    const reset = () => pool.query(`delete from orders; delete from domain_events where type = 'order.opened'`);

    const url = api.url('/orders');
    const target = {
      url,
      method: 'POST',
      headers: (seq: number) => ({ authorization: `Bearer ${orderOf(holders, seq).holder.token}` }),
      body: (seq: number) => orderOf(holders, seq).order as unknown as Record<string, unknown>,
    };
    const seq = nextSeq();
    const check = await call(url, { method: 'POST', headers: target.headers(seq), body: target.body(seq) });
    if (check.status !== 201) throw new Error(`an order answered ${check.status}: ${check.body.slice(0, 300)}`);
    await plainOpen(pool, store, orderOf(holders, seq + 1));

    const figure = await h.compareRuns({
      name: `POST /orders (open a market order) rps vs the same transaction via pg, ${CONNECTIONS} in flight`,
      connections: CONNECTIONS,
      rounds: ROUNDS,
      candidate: async (window) => {
        await reset();
        return measure({ ...target, ...window });
      },
      baseline: async (window) => {
        await reset();
        return plainOpens(pool, store, holders, window);
      },
    });
    progress(
      `p99 of an open under this load: ${fmt(figure.candidateP99Ms, 1)} ms through the API, ` +
        `${fmt(figure.baselineP99Ms, 1)} ms straight through pg`,
    );
    return [figure];
  } finally {
    await api?.stop();
    await pool.end().catch(() => undefined);
    if (redis.status === 'ready') {
      await redis.del(`${prefix}:quotes`, `${prefix}:quotes:ver`).catch(() => undefined);
      await redis.quit().catch(() => undefined);
    } else redis.disconnect();
    await dropDatabase(database).catch((err: unknown) => progress(`could not drop database ${database}: ${String(err)}`));
  }
}

/** The baseline: a closed loop of `connections` workers, each opening one order and waiting for the commit before the next. */
async function plainOpens(pool: Pool, store: QuoteStore, holders: Holder[], window: RunWindow): Promise<LoadResult> {
  return measureLoop(window, (seq) => plainOpen(pool, store, orderOf(holders, seq)), progress);
}

/** What the baseline reads of an instrument row of HOLDINGS_AND_TERMS. */
interface TermsRow {
  symbol: string;
  digits: number;
  contract_size: string;
  wanted: boolean;
  joining: boolean;
  gi_enabled: boolean | null;
  gi_spread: string | null;
}

/** One open as openMarketOrder sends it, through plain `pg`. */
async function plainOpen(
  pool: Pool,
  store: QuoteStore,
  { holder, order }: { holder: Holder; order: NewMarketOrder },
): Promise<void> {
  const client = await pool.connect();
  const query = <R extends object>(s: Statement) => client.query<R>(pgPlaceholders(s.sql), s.values);
  try {
    await client.query('begin');
    const [account] = (
      await query<{ id: string; login: string; currency: string; group_id: string | null }>(
        openStatements.lockOwnAccount(holder.account.login, { customerId: holder.customerId, staff: null }),
      )
    ).rows;
    if (!account) throw new Error(`account ${holder.account.id} is gone`);
    const rows = (
      await query<HoldingsAndTermsRow & TermsRow>(
        openStatements.holdingsAndTerms({ id: account.id, currency: account.currency, groupId: account.group_id }, order.symbol),
      )
    ).rows;
    const symbols = [...(rows[0]?.open ?? []).map((o) => o.symbol), order.symbol];
    const terms = rows.filter((t) => t.id !== null);
    const [quotes] = await Promise.all([
      store.getMany([...new Set(symbols)]),
      store.getMany(terms.filter((t) => t.joining).map((t) => t.symbol)),
    ]);
    const instrument = terms.find((t) => t.wanted && t.symbol === order.symbol);
    const raw = quotes.get(order.symbol);
    if (!instrument || !raw) throw new Error(`no instrument or quote for ${order.symbol}`);
    const price = openingPrice(order.cmd, withSpread(raw, dec(instrument.gi_spread ?? 0), instrument.digits));
    const params = openingParams({
      account: { id: account.id, login: String(account.login), customerId: holder.customerId },
      order,
      price,
      contractSize: instrument.contract_size,
      openedAt: new Date(),
      // The bench's group charges no commission.
      commission: dec(0),
    });
    await query(openStatements.open(params));
    await client.query('commit');
  } catch (err) {
    await rollback(client);
    throw err;
  } finally {
    client.release();
  }
}

async function rollback(client: PoolClient): Promise<void> {
  await client.query('rollback').catch(() => undefined);
}

// ---------------------------------------------------------------------------------------------
// Setup, through the API as a broker would do it (bench/replica.bench.ts opens orders on the same)

export async function setUp(api: Server, pool: Pool, tag: string): Promise<Holder[]> {
  const admin = (await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', ADMIN, 200)).access_token;
  const group = await request<{ id: string }>(
    api,
    'POST',
    '/groups',
    admin,
    { name: `bench-orders-${tag}`, default_leverage: 100 },
    201,
  );
  for (const i of INSTRUMENTS) {
    await request(
      api,
      'POST',
      '/api/platform/instruments',
      admin,
      { symbol: i.symbol, digits: i.digits, contract_size: 100000, base_currency: i.base, quote_currency: i.quote },
      [201, 409],
    );
    await request(api, 'POST', '/simulator/quotes', admin, { symbol: i.symbol, bid: i.bid, ask: i.ask }, 200);
  }
  const holders: Holder[] = [];
  for (let i = 0; i < CUSTOMERS; i++) {
    const { customerId, liveLogin, token } = await benchCustomer(api, admin, {
      email: `bench-orders-${tag}-${i}@bench.test`,
      lastName: `Trader ${i}`,
      groupId: group.id,
    });
    await request(api, 'POST', `/api/backoffice/accounts/${liveLogin}/deposits`, admin, { amount: 1_000_000_000 }, 201);
    const { rows } = await pool.query<{ id: string }>('select id from accounts where login = $1', [liveLogin]);
    holders.push({ customerId, token, account: { id: rows[0]!.id, login: String(liveLogin) } });
  }
  progress(`${CUSTOMERS} customers, each with a funded live account in one group`);
  return holders;
}
