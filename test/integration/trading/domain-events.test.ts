import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, openOrder, setQuote, setUpMarket, type Market } from '../../helpers/trading';
import { deposit, eventsOf, expect422, expectError, expectOk, ledgerOf, ledgerRowsForTicket, sql } from './trading-kit';

let app: TestApp;
let token: string;
let market: Market;
let customer: LoggedIn;

beforeAll(async () => {
  app = await startTestApp({ label: 'events' });
  token = await adminToken(app);
  market = await setUpMarket(app, token);
  customer = await createCustomer(app, token);
});
afterAll(() => app?.stop());
beforeEach(() => setQuote(app, token, 'EURUSD', 1.1, 1.1002));
afterEach(() => expectLedgerBalanced(app));

let injected = 0;
/** Makes inserts of one event type fail in the database for the duration of `body`. */
async function withFailingEvent(type: string, body: () => Promise<void>): Promise<void> {
  const fn = `fail_event_${++injected}_${process.pid}`;
  await sql(
    app,
    `create function ${fn}() returns trigger language plpgsql as $$
       begin if new.type = '${type}' then raise exception 'injected outbox failure'; end if; return new; end $$`,
  );
  await sql(app, `create trigger ${fn} before insert on domain_events for each row execute function ${fn}()`);
  try {
    await body();
  } finally {
    await sql(app, `drop trigger ${fn} on domain_events`);
    await sql(app, `drop function ${fn}()`);
  }
}

describe('customer.created', () => {
  test('when a customer is created, then exactly one customer.created row names it, without secrets', async () => {
    const c = await createCustomer(app, token);
    const events = await eventsOf(app, 'customer.created', c.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ aggregate_type: 'customer', customer_id: c.id });
    expect(events[0]!.data).toMatchObject({ id: c.id, email: c.email });
    expect(JSON.stringify(events[0]!.data)).not.toMatch(/password|argon2/i);
  });

  test('when creating a customer fails on a duplicate email, then no event is written for it', async () => {
    const before = (await eventsOf(app, 'customer.created')).length;
    const res = await app.request('POST', '/api/crm/customers', {
      token,
      body: { email: customer.email, password: 'another-password-1', first_name: 'A', last_name: 'B' },
    });
    expect(res.status).toBe(409);
    expect(await eventsOf(app, 'customer.created')).toHaveLength(before);
  });
});

describe('deposit.completed', () => {
  test('when three deposits are made, then three deposit.completed rows carry each amount and balance', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 0);
    const ids = [];
    for (const amount of [10, 0.5, 7.25]) ids.push(expectOk(await deposit(app, token, login, amount), 201));
    const events = await eventsOf(app, 'deposit.completed', login);
    expect(events).toHaveLength(3);
    expect(events.map((e) => e.data)).toEqual(ids);
    for (const e of events) expect(e).toMatchObject({ aggregate_type: 'account', customer_id: customer.id });
  });

  test('when a deposit is refused by validation, then no event is written', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 0);
    expect422(await deposit(app, token, login, 0.001), ['body', 'amount'], 'decimal_max_places');
    expect(await eventsOf(app, 'deposit.completed', login)).toEqual([]);
  });

  test('when writing deposit.completed fails, then the deposit is rolled back: no balance change, no ledger row', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 0);
    await withFailingEvent('deposit.completed', async () => {
      expect((await deposit(app, token, login, 40)).status).toBe(500);
    });
    expect(await ledgerOf(app, login)).toEqual([]);
    expect(expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200).balance).toBe('0.00');
  });
});

describe('order.opened and order.closed', () => {
  test('when an order is opened and closed, then one order.opened and one order.closed row describe it', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    const opened = expectOk(
      await app.request('POST', '/orders', { token, body: { login, symbol: 'EURUSD', cmd: 0, volume: 0.1 } }),
      201,
    );
    await setQuote(app, token, 'EURUSD', 1.101, 1.1012);
    const closed = expectOk(await app.request('POST', `/orders/${opened.order}/close`, { token }), 200);
    const o = await eventsOf(app, 'order.opened', opened.order);
    const c = await eventsOf(app, 'order.closed', opened.order);
    expect(o).toHaveLength(1);
    expect(c).toHaveLength(1);
    expect(o[0]).toMatchObject({ aggregate_type: 'order', customer_id: customer.id });
    expect(o[0]!.data).toEqual(opened);
    expect(c[0]).toMatchObject({ aggregate_type: 'order', customer_id: customer.id });
    expect(c[0]!.data).toEqual(closed);
  });

  test('when an open is refused or a close fails or repeats, then no extra event is written', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 100);
    const before = (await eventsOf(app, 'order.opened')).length;
    expect422(await app.request('POST', '/orders', { token, body: { login, symbol: 'EURUSD', cmd: 0, volume: 1 } }), [
      'body',
      'volume',
    ]);
    expect(await eventsOf(app, 'order.opened')).toHaveLength(before);
    const ticket = await openOrder(app, token, login, 0, 0.01);
    expectOk(await app.request('DELETE', '/simulator/quotes/EURUSD', { token }), 204);
    expectError(await app.request('POST', `/orders/${ticket}/close`, { token }), 409, 'PRICE_UNAVAILABLE');
    expect(await eventsOf(app, 'order.closed', ticket)).toEqual([]);
    await setQuote(app, token, 'EURUSD', 1.1, 1.1002);
    expectOk(await app.request('POST', `/orders/${ticket}/close`, { token }), 200);
    expectError(await app.request('POST', `/orders/${ticket}/close`, { token }), 409, 'ORDER_NOT_OPEN');
    expect(await eventsOf(app, 'order.closed', ticket)).toHaveLength(1);
  });

  test('when several requests race to close one order, then there is exactly one order.closed row', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    const ticket = await openOrder(app, token, login, 1, 0.1);
    await Promise.all(Array.from({ length: 4 }, () => app.request('POST', `/orders/${ticket}/close`, { token })));
    expect(await eventsOf(app, 'order.closed', ticket)).toHaveLength(1);
  });

  test('when writing order.opened fails, then no order exists afterwards', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    await withFailingEvent('order.opened', async () => {
      const res = await app.request('POST', '/orders', { token, body: { login, symbol: 'EURUSD', cmd: 0, volume: 0.1 } });
      expect(res.status).toBe(500);
    });
    expect(expectOk(await app.request('GET', `/orders?login=${login}`, { token }), 200).items).toEqual([]);
  });

  test('when writing order.closed fails, then the order stays open and no profit is booked', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    const ticket = await openOrder(app, token, login, 0, 0.1);
    await setQuote(app, token, 'EURUSD', 1.101, 1.1012);
    await withFailingEvent('order.closed', async () => {
      expect((await app.request('POST', `/orders/${ticket}/close`, { token })).status).toBe(500);
    });
    const open = expectOk(await app.request('GET', `/orders?login=${login}&status=open`, { token }), 200).items;
    expect(open.map((o: { order: number }) => o.order)).toEqual([ticket]);
    expect(await ledgerRowsForTicket(app, ticket)).toBe(0);
    expect(expectOk(await app.request('POST', `/orders/${ticket}/close`, { token }), 200).profit).toBe('8.00');
  });

  test('when a bulk close closes three orders, then each has exactly one order.closed row', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    const tickets = [
      await openOrder(app, token, login, 0, 0.1),
      await openOrder(app, token, login, 1, 0.1),
      await openOrder(app, token, login, 0, 0.2),
    ];
    const res = expectOk(await app.request('POST', '/orders/bulk-close', { token, body: { login } }), 200);
    expect([...res.closed].sort()).toEqual([...tickets].sort());
    for (const t of tickets) {
      const events = await eventsOf(app, 'order.closed', t);
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toMatchObject({ order: t, status: 'closed', close_reason: 'bulk_close' });
    }
  });
});
