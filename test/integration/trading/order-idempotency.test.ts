import { Client } from 'pg';
import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { startTestApp, waitFor, type TestApp, type TestResponse } from '../../helpers/test-app';
import { directDatabaseUrl } from '../../helpers/test-database';
import { expectLedgerBalanced, fundedAccount, openOrder, setUpMarket, type Market } from '../../helpers/trading';
import { expect422, expectError, sql } from './trading-kit';

/**
 * POST /orders, /orders/pending, /orders/{ticket}/close and
 * /orders/bulk-close take an Idempotency-Key with the money routes' rules (section 4). A
 * client that retries after a lost answer must not open, place or close twice.
 */
let app: TestApp;
let admin: string;
let market: Market;
let customer: LoggedIn;

beforeAll(async () => {
  app = await startTestApp({ label: 'orderidem' });
  admin = await adminToken(app);
  market = await setUpMarket(app, admin);
  customer = await createCustomer(app, admin);
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

/** What a retried order request could wrongly add to. */
async function counts(): Promise<Record<string, number>> {
  const [row] = await sql<Record<string, string>>(
    app,
    `select (select count(*) from orders)::text as orders,
            (select count(*) from orders where status = 'open')::text as open_orders,
            (select count(*) from pending_orders)::text as pending_orders,
            (select count(*) from ledger_entries)::text as ledger_rows,
            (select count(*) from bulk_close_runs)::text as bulk_close_runs`,
  );
  return Object.fromEntries(Object.entries(row!).map(([k, v]) => [k, Number(v)]));
}

function delta(from: Record<string, number>, to: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(to).map(([k, v]) => [k, v - (from[k] ?? 0)]));
}

/** One case: how to call the route for a fresh account, with the key's request and another one. */
interface Case {
  status: number;
  /** Prepares a fresh account (and whatever the route acts on); returns the calls. */
  prepare(): Promise<{
    login: number;
    send: (key: string) => Promise<TestResponse>;
    other: (key: string) => Promise<TestResponse>;
  }>;
}

const keyed = (key: string) => ({ 'idempotency-key': key });

const CASES: Record<string, Case> = {
  'POST /orders': {
    status: 201,
    async prepare() {
      const login = await fundedAccount(app, admin, customer.id, market.groupId);
      const open = (volume: number) => (key: string) =>
        app.request('POST', '/orders', {
          token: customer.token,
          body: { login, symbol: 'EURUSD', cmd: 0, volume },
          headers: keyed(key),
        });
      return { login, send: open(0.01), other: open(0.02) };
    },
  },
  'POST /orders/pending': {
    status: 201,
    async prepare() {
      const login = await fundedAccount(app, admin, customer.id, market.groupId);
      const place = (tp: number) => (key: string) =>
        app.request('POST', '/orders/pending', {
          token: customer.token,
          body: { login, symbol: 'EURUSD', cmd: 2, volume: 0.01, trigger_price: 1.09, sl: 1.08, tp },
          headers: keyed(key),
        });
      return { login, send: place(1.12), other: place(1.13) };
    },
  },
  'POST /orders/{ticket}/close': {
    status: 200,
    async prepare() {
      const login = await fundedAccount(app, admin, customer.id, market.groupId);
      const first = await openOrder(app, customer.token, login);
      const second = await openOrder(app, customer.token, login);
      const close = (ticket: number) => (key: string) =>
        app.request('POST', `/orders/${ticket}/close`, { token: customer.token, headers: keyed(key) });
      // The other request is the same key on another ticket: the path is part of the request.
      return { login, send: close(first), other: close(second) };
    },
  },
  'POST /orders/bulk-close': {
    status: 200,
    async prepare() {
      const login = await fundedAccount(app, admin, customer.id, market.groupId);
      await openOrder(app, customer.token, login);
      await openOrder(app, customer.token, login, 1);
      const closeAll = (comment: string) => (key: string) =>
        app.request('POST', '/orders/bulk-close', { token: admin, body: { login, comment }, headers: keyed(key) });
      return { login, send: closeAll('end of day'), other: closeAll('risk') };
    },
  },
};

const cases = Object.entries(CASES);
let serial = 0;
const freshKey = (label: string) => `${label}-${Date.now()}-${serial++}`;

describe.each(cases)('%s with an Idempotency-Key', (_name, route) => {
  test('when the same key and body come twice, then the first answer is replayed and nothing new is traded', async () => {
    const { send } = await route.prepare();
    const key = freshKey('replay');
    const first = await send(key);
    expect(first.status).toBe(route.status);
    const after = await counts();
    const second = await send(key);
    expect(second.status).toBe(route.status);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(await counts()).toEqual(after);
  });

  test('when the same key comes with another request, then 422 at the header and nothing is traded', async () => {
    const { send, other } = await route.prepare();
    const key = freshKey('other');
    expect((await send(key)).status).toBe(route.status);
    const after = await counts();
    const res = await other(key);
    expect422(res, ['header', 'Idempotency-Key']);
    expect(await counts()).toEqual(after);
  });

  test('when the same key comes while the first request is still running, then 409 and only the first trades', async () => {
    const { login, send } = await route.prepare();
    const key = freshKey('inflight');
    const before = await counts();
    // The account row held locked keeps the first request inside its handler, its key claimed.
    const holder = new Client({ connectionString: directDatabaseUrl(app.databaseName) });
    await holder.connect();
    let first: Promise<TestResponse> | undefined;
    try {
      await holder.query('begin');
      await holder.query('select id from accounts where login = $1 for update', [login]);
      first = send(key);
      await waitFor('the first request to hold its key and wait on the account', async () => {
        const [row] = await sql<{ claimed: string; waiting: string }>(
          app,
          `select (select count(*) from idempotency_keys where key = ? and state = 'in_flight')::text as claimed,
                  (select count(*) from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock')::text as waiting`,
          [key],
        );
        return row!.claimed === '1' && Number(row!.waiting) > 0;
      });
      const second = await send(key);
      expectError(second, 409, 'IDEMPOTENCY_KEY_IN_USE');
    } finally {
      await holder.query('commit').catch(() => undefined);
      await holder.end();
    }
    const settled = await first!;
    expect(settled.status).toBe(route.status);
    const third = await send(key);
    expect(third.body).toEqual(settled.body);
    expect(third.headers.get('idempotent-replayed')).toBe('true');
    // The 409 traded nothing: the race changed as much as one such request does alone.
    const raced = delta(before, await counts());
    const alone = await route.prepare();
    const start = await counts();
    expect((await alone.send(freshKey('alone'))).status).toBe(route.status);
    expect(raced).toEqual(delta(start, await counts()));
  });
});
