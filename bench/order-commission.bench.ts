import { randomBytes } from 'node:crypto';
import { CHILD_EXEC_ARGV, fmt, type Figure, type Harness, type Server } from './lib/harness';
import {
  BASE_DATABASE_URL,
  BENCH_ADMIN as ADMIN,
  benchCustomer,
  benchPool,
  dropDatabase,
  progressOf,
  request,
  withDatabase,
} from './lib/bench-kit';
import { call, measure, nextSeq } from './lib/load';

/**
 * What a commission adds to POST /orders (aim: a ratio of at least 0.9): the same route, the
 * same load, on accounts of a group that charges a commission (per_lot 3.5) against accounts of
 * a group that charges none. With
 * a commission the opening statement also updates the balance and appends the `commission`
 * ledger row (both in the one statement that inserts the order and its event); the pricing
 * terms carry the group's commission in the read they already were, so no round trip is added.
 *
 * Each side has CUSTOMERS customers with one funded live USD account each; request n is
 * customer n mod CUSTOMERS, so the requests in flight wait on no one else's account lock.
 * Orders alternate EURUSD and USDJPY, buy and sell, 0.01 lots, as in orders.bench.ts. Before
 * every round the open orders are deleted by SQL so both sides hold as few positions (the
 * ledger rows stay: the ledger refuses deletes, and they do not enter the open's reads).
 */
const progress = progressOf('order-commission');
const CUSTOMERS = 32;
const CONNECTIONS = 16;
const INSTRUMENTS = [
  { symbol: 'EURUSD', digits: 5, base: 'EUR', quote: 'USD', bid: 1.1, ask: 1.1002 },
  { symbol: 'USDJPY', digits: 3, base: 'USD', quote: 'JPY', bid: 150, ask: 150.02 },
] as const;

interface Holder {
  token: string;
  login: number;
}

function orderOf(holders: Holder[], seq: number): { holder: Holder; body: Record<string, unknown> } {
  const holder = holders[seq % CUSTOMERS]!;
  const turn = Math.floor(seq / CUSTOMERS);
  return {
    holder,
    body: {
      login: holder.login,
      symbol: INSTRUMENTS[turn % 2]!.symbol,
      cmd: Math.floor(turn / 2) % 2 === 0 ? 0 : 1,
      volume: 0.01,
    },
  };
}

export async function run(h: Harness): Promise<Figure[]> {
  const tag = randomBytes(4).toString('hex');
  const database = `trading_bench_commission_${tag}`;
  const databaseUrl = withDatabase(BASE_DATABASE_URL, database);
  const pool = benchPool(databaseUrl, 2);
  let api: Server | undefined;
  try {
    api = await h.start({
      entry: 'servers/service.ts',
      name: 'api',
      execArgv: CHILD_EXEC_ARGV,
      env: {
        BENCH_DATABASE_URL: databaseUrl,
        BENCH_QUEUE_PREFIX: `bench-commission-${tag}`,
        BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
        BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
      },
    });
    const { charged, free } = await setUp(api, tag);
    const reset = () => pool.query(`delete from orders; delete from domain_events where type = 'order.opened'`);
    const url = api.url('/orders');
    const target = (holders: Holder[]) => ({
      url,
      method: 'POST',
      headers: (seq: number) => ({ authorization: `Bearer ${orderOf(holders, seq).holder.token}` }),
      body: (seq: number) => orderOf(holders, seq).body,
    });
    for (const [holders, commission] of [
      [charged, '-0.04'],
      [free, '0.00'],
    ] as const) {
      const seq = nextSeq();
      const check = await call(url, { method: 'POST', headers: target(holders).headers(seq), body: target(holders).body(seq) });
      if (check.status !== 201) throw new Error(`an order answered ${check.status}: ${check.body.slice(0, 300)}`);
      const charge = (JSON.parse(check.body) as { commission: string }).commission;
      if (charge !== commission) throw new Error(`an order was charged ${charge}, expected ${commission}`);
    }

    const figure = await h.compareRuns({
      name: `POST /orders in a group with a per_lot commission vs in a group without, ${CONNECTIONS} in flight`,
      connections: CONNECTIONS,
      candidate: async (window) => {
        await reset();
        return measure({ ...target(charged), ...window });
      },
      baseline: async (window) => {
        await reset();
        return measure({ ...target(free), ...window });
      },
    });
    progress(
      `p99 of an open under this load: ${fmt(figure.candidateP99Ms, 1)} ms with a commission, ` +
        `${fmt(figure.baselineP99Ms, 1)} ms without`,
    );
    return [figure];
  } finally {
    await api?.stop();
    await pool.end().catch(() => undefined);
    await dropDatabase(database).catch((err: unknown) => progress(`could not drop database ${database}: ${String(err)}`));
  }
}

async function setUp(api: Server, tag: string): Promise<{ charged: Holder[]; free: Holder[] }> {
  const admin = (await request<{ access_token: string }>(api, 'POST', '/api/admin/users/login', '', ADMIN, 200)).access_token;
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
  const holdersOf = async (side: string, terms: Record<string, unknown>): Promise<Holder[]> => {
    const group = await request<{ id: string }>(
      api,
      'POST',
      '/groups',
      admin,
      { name: `bench-commission-${side}-${tag}`, default_leverage: 100, ...terms },
      201,
    );
    const holders: Holder[] = [];
    for (let i = 0; i < CUSTOMERS; i++) {
      const { liveLogin, token } = await benchCustomer(api, admin, {
        email: `bench-commission-${side}-${tag}-${i}@bench.test`,
        lastName: `Trader ${i}`,
        groupId: group.id,
      });
      await request(api, 'POST', `/api/backoffice/accounts/${liveLogin}/deposits`, admin, { amount: 1_000_000_000 }, 201);
      holders.push({ token, login: liveLogin });
    }
    return holders;
  };
  const charged = await holdersOf('charged', { commission_type: 'per_lot', commission_value: 3.5 });
  const free = await holdersOf('free', {});
  progress(`${CUSTOMERS} customers in a group with a commission, ${CUSTOMERS} in one without`);
  return { charged, free };
}
