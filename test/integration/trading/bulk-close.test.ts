import { closeRunTicket, closeRunTickets } from '../../../src/domain/orders/bulk-close';
import { BulkCloseTicketJob } from '../../../src/jobs/bulk-close.job';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, openOrder, setQuote, setUpMarket, type Market } from '../../helpers/trading';
import { allPages, eventsOf, expect422, expectError, expectOk, ledgerRowsForTicket, sql } from './trading-kit';

const bulkClose = (app: TestApp, token: string, body: unknown) => app.request('POST', '/orders/bulk-close', { token, body });

async function ordersOf(app: TestApp, token: string, login: number, status?: 'open' | 'closed') {
  const q = status ? `&status=${status}` : '';
  return allPages<{ order: number; status: string; close_reason: string | null; profit: string | null }>(
    app,
    token,
    `/orders?login=${login}${q}`,
  );
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

describe('bulk close, answered when the jobs finish', () => {
  let app: TestApp;
  let token: string;
  let market: Market;
  let customer: LoggedIn;

  beforeAll(async () => {
    app = await startTestApp({ label: 'bulkclose' });
    token = await adminToken(app);
    market = await setUpMarket(app, token);
    customer = await createCustomer(app, token);
  });
  afterAll(() => app?.stop());
  beforeEach(async () => {
    await setQuote(app, token, 'EURUSD', 1.1, 1.1002);
    await setQuote(app, token, 'USDJPY', 150, 150.02);
  });
  afterEach(() => expectLedgerBalanced(app));

  async function accountWithOrders(n: number, deposit = 10_000): Promise<{ login: number; tickets: number[] }> {
    const login = await fundedAccount(app, token, customer.id, market.groupId, deposit);
    const tickets: number[] = [];
    for (let i = 0; i < n; i++) tickets.push(await openOrder(app, token, login, i % 2 === 0 ? 0 : 1, 0.1, 'EURUSD'));
    return { login, tickets };
  }

  test('when an account has open orders, then every one is closed once and the answer lists them', async () => {
    const { login, tickets } = await accountWithOrders(6);
    await setQuote(app, token, 'EURUSD', 1.101, 1.1012);
    const res = await bulkClose(app, token, { login, comment: 'end of day' });
    const body = expectOk(res, 200);
    expect(body).toMatchObject({ login, failed: [] });
    expect(sorted(body.closed)).toEqual(sorted(tickets));
    // A 200 is the finished run (a slow one is 202 with a status_url instead).
    expect(body.status).toBe('completed');
    const orders = await ordersOf(app, token, login);
    expect(orders.map((o) => [o.order, o.status, o.close_reason])).toEqual(
      sorted(tickets)
        .reverse()
        .map((t) => [t, 'closed', 'bulk_close']),
    );
    for (const t of tickets) expect(await ledgerRowsForTicket(app, t)).toBe(1);
    // 3 buys at 1.1002 closed at 1.101: +8.00 each; 3 sells at 1.1 closed at 1.1012: -12.00 each.
    const view = expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200);
    expect(view).toMatchObject({ balance: '9988.00', equity: '9988.00', margin: '0.00' });
  });

  test('when the run is read back by id, then it gives the same result', async () => {
    const { login, tickets } = await accountWithOrders(2);
    const body = expectOk(await bulkClose(app, token, { login }), 200);
    expect(body.id).toMatch(/^[0-9a-f-]{36}$/);
    const again = expectOk(await app.request('GET', `/orders/bulk-close/${body.id}`, { token }), 200);
    expect(again).toEqual(body);
    expect(sorted(again.closed)).toEqual(sorted(tickets));
  });

  test('when one symbol has no quote, then its ticket is in failed with a reason, stays open, and the others close', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 10_000);
    const eur = [await openOrder(app, token, login, 0, 0.1), await openOrder(app, token, login, 1, 0.1)];
    const jpy = await openOrder(app, token, login, 0, 0.1, 'USDJPY');
    expectOk(await app.request('DELETE', '/simulator/quotes/USDJPY', { token }), 204);
    const body = expectOk(await bulkClose(app, token, { login }), 200);
    expect(sorted(body.closed)).toEqual(sorted(eur));
    expect(body.failed).toHaveLength(1);
    expect(body.failed[0]).toEqual({ ticket: jpy, reason: expect.stringMatching(/USDJPY/) });
    expect((await ordersOf(app, token, login, 'open')).map((o) => o.order)).toEqual([jpy]);
    expect(await ledgerRowsForTicket(app, jpy)).toBe(0);
    // Once the quote is back, a second bulk close closes it.
    await setQuote(app, token, 'USDJPY', 150, 150.02);
    const second = expectOk(await bulkClose(app, token, { login }), 200);
    expect(second).toMatchObject({ closed: [jpy], failed: [] });
  });

  test('when the account has no open orders, then it is 200 with empty lists', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 100);
    expect(expectOk(await bulkClose(app, token, { login }), 200)).toMatchObject({ login, closed: [], failed: [] });
    const ticket = await openOrder(app, token, login, 0, 0.01);
    expectOk(await app.request('POST', `/orders/${ticket}/close`, { token }), 200);
    expect(expectOk(await bulkClose(app, token, { login }), 200)).toMatchObject({ login, closed: [], failed: [] });
  });

  test('when the customer has another account and pending orders, then only the open market orders of the login close', async () => {
    const { login, tickets } = await accountWithOrders(2);
    const { tickets: others } = await accountWithOrders(2);
    const pending = expectOk(
      await app.request('POST', '/orders/pending', {
        token,
        body: { login, symbol: 'EURUSD', cmd: 2, volume: 0.1, trigger_price: 1.09 },
      }),
      201,
    );
    const body = expectOk(await bulkClose(app, token, { login }), 200);
    expect(sorted(body.closed)).toEqual(sorted(tickets));
    for (const t of others) expect(await ledgerRowsForTicket(app, t)).toBe(0);
    const list = expectOk(await app.request('GET', `/orders/pending?login=${login}`, { token }), 200).items;
    expect(list.find((p: { order: number }) => p.order === pending.order).status).toBe('pending');
  });

  test('when two bulk closes of one login race, then every ticket is closed and booked exactly once', async () => {
    for (let round = 0; round < 3; round++) {
      const { login, tickets } = await accountWithOrders(8);
      await setQuote(app, token, 'EURUSD', 1.1005 + round * 0.0001, 1.1007 + round * 0.0001);
      const [a, b] = await Promise.all([bulkClose(app, token, { login }), bulkClose(app, token, { login })]);
      const ra = expectOk(a, 200);
      const rb = expectOk(b, 200);
      expect(ra.failed).toEqual([]);
      expect(rb.failed).toEqual([]);
      expect(sorted([...new Set([...ra.closed, ...rb.closed])])).toEqual(sorted(tickets));
      for (const t of tickets) {
        expect(await ledgerRowsForTicket(app, t)).toBe(1);
        expect(await eventsOf(app, 'order.closed', t)).toHaveLength(1);
      }
      expect(await ordersOf(app, token, login, 'open')).toEqual([]);
    }
  });

  test('when manual closes race a bulk close, then each ticket is booked once and the bulk close counts them as closed', async () => {
    const { login, tickets } = await accountWithOrders(6);
    const [bulk, ...manual] = await Promise.all([
      bulkClose(app, token, { login }),
      ...tickets.slice(0, 3).map((t) => app.request('POST', `/orders/${t}/close`, { token })),
    ]);
    for (const m of manual) expect([200, 409]).toContain(m.status);
    const body = expectOk(bulk, 200);
    expect(body.failed).toEqual([]);
    // The run snapshots the open tickets when it starts: a ticket a manual close took first may be absent.
    const manuallyClosed = tickets.slice(0, 3).filter((_, i) => manual[i]!.status === 200);
    expect(sorted([...new Set([...body.closed, ...manuallyClosed])])).toEqual(sorted(tickets));
    for (const t of tickets) expect(await ledgerRowsForTicket(app, t)).toBe(1);
  });

  test('when deposits and new orders run while a bulk close books profits, then the balance is the sum of its rows', async () => {
    const { login, tickets } = await accountWithOrders(10);
    await setQuote(app, token, 'EURUSD', 1.1011, 1.1013);
    const answers = await Promise.all([
      bulkClose(app, token, { login }),
      ...Array.from({ length: 10 }, () =>
        app.request('POST', `/api/backoffice/accounts/${login}/deposits`, { token, body: { amount: 0.01 } }),
      ),
      ...Array.from({ length: 3 }, () =>
        app.request('POST', '/orders', { token, body: { login, symbol: 'EURUSD', cmd: 0, volume: 0.1 } }),
      ),
    ]);
    const bulk = expectOk(answers[0]!, 200);
    for (const a of answers.slice(1, 11)) expectOk(a, 201);
    for (const a of answers.slice(11)) expectOk(a, 201);
    for (const t of tickets) expect(await ledgerRowsForTicket(app, t)).toBe(1);
    expect(bulk.failed).toEqual([]);
    // 5 buys at 1.1002 closed at 1.1011: +9.00 each; 5 sells at 1.1 closed at 1.1013: -13.00 each; plus 0.10.
    const closedTickets = new Set(bulk.closed as number[]);
    expect(tickets.every((t) => closedTickets.has(t))).toBe(true);
    const view = expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200);
    const fromNewOrders = (await ordersOf(app, token, login, 'closed')).filter((o) => !tickets.includes(o.order));
    const extra = fromNewOrders.reduce((sum, o) => sum + Math.round(Number(o.profit) * 100), 0);
    expect(Math.round(Number(view.balance) * 100)).toBe(1_000_000 - 2000 + 10 + extra);
  });

  test('when a ticket job runs again for a decided ticket, then it books nothing (domain function called twice)', async () => {
    const { login, tickets } = await accountWithOrders(2);
    const body = expectOk(await bulkClose(app, token, { login }), 200);
    const em = app.runtime.services.orm.em.fork();
    for (const t of tickets) {
      expect(await closeRunTicket(em, app.runtime.services.quotes, body.id, String(t))).toBe('closed');
      expect(await closeRunTicket(em.fork(), app.runtime.services.quotes, body.id, String(t))).toBe('closed');
      expect(await ledgerRowsForTicket(app, t)).toBe(1);
    }
  });

  test('when a run item is still pending and its job runs twice in parallel, then the ticket is closed and booked once', async () => {
    const { login, tickets } = await accountWithOrders(1);
    const ticket = tickets[0]!;
    // A run recorded as the API records it, whose job has not run yet.
    const [run] = await sql<{ id: string }>(
      app,
      `insert into bulk_close_runs (id, created_at, updated_at, login, status) values (gen_random_uuid(), now(), now(), ?, 'running') returning id`,
      [login],
    );
    await sql(app, `insert into bulk_close_items (run_id, ticket, status) values (?, ?, 'pending')`, [run!.id, ticket]);
    const services = app.runtime.services;
    const outcomes = await Promise.all([
      closeRunTicket(services.orm.em.fork(), services.quotes, run!.id, String(ticket)),
      closeRunTicket(services.orm.em.fork(), services.quotes, run!.id, String(ticket)),
    ]);
    expect(outcomes).toEqual(['closed', 'closed']);
    expect(await ledgerRowsForTicket(app, ticket)).toBe(1);
    expect(await closeRunTicket(services.orm.em.fork(), services.quotes, run!.id, String(ticket))).toBe('closed');
    expect(await ledgerRowsForTicket(app, ticket)).toBe(1);
  });

  test('when a chunk whose first ticket is decided runs twice in parallel, then each ticket is closed and booked once', async () => {
    const { login, tickets } = await accountWithOrders(3);
    const [run] = await sql<{ id: string }>(
      app,
      `insert into bulk_close_runs (id, created_at, updated_at, login, status) values (gen_random_uuid(), now(), now(), ?, 'running') returning id`,
      [login],
    );
    for (const t of tickets)
      await sql(app, `insert into bulk_close_items (run_id, ticket, status) values (?, ?, 'pending')`, [run!.id, t]);
    const services = app.runtime.services;
    const chunk = tickets.map(String);
    // A retried chunk: its first ticket was decided by the attempt that failed.
    expect(await closeRunTicket(services.orm.em.fork(), services.quotes, run!.id, chunk[0]!)).toBe('closed');
    const outcomes = await Promise.all([
      closeRunTickets(services.orm.em.fork(), services.quotes, run!.id, chunk),
      closeRunTickets(services.orm.em.fork(), services.quotes, run!.id, chunk),
    ]);
    expect(outcomes).toEqual([
      ['closed', 'closed', 'closed'],
      ['closed', 'closed', 'closed'],
    ]);
    for (const t of tickets) expect(await ledgerRowsForTicket(app, t)).toBe(1);
  });

  test('when the ticket job is added to the queue again after the run, then the worker books nothing more', async () => {
    const { login, tickets } = await accountWithOrders(2);
    const body = expectOk(await bulkClose(app, token, { login }), 200);
    const services = app.runtime.services;
    for (const t of tickets) {
      // A fresh job id, so BullMQ does not deduplicate it against the finished one: the worker really runs it.
      const job = await services.jobs
        .queue(BulkCloseTicketJob.queue)
        .add(BulkCloseTicketJob.name, { run_id: body.id, tickets: [String(t)] }, { jobId: `rerun-${body.id}-${t}` });
      expect(await services.queueEvents.waitFor(job, 10_000)).toEqual({ statuses: ['closed'] });
      expect(await ledgerRowsForTicket(app, t)).toBe(1);
    }
    expect(expectOk(await app.request('GET', `/orders/bulk-close/${body.id}`, { token }), 200)).toEqual(body);
  });

  test('when the caller lacks close_position or is a customer, then it is 403 and nothing closes', async () => {
    const { login, tickets } = await accountWithOrders(1);
    const staff = await createStaff(app, ['open_position', 'modify_orders', 'view_orders', 'view_customers'], token);
    expectError(await bulkClose(app, staff.token, { login }), 403, 'FORBIDDEN');
    expectError(await bulkClose(app, customer.token, { login }), 403, 'FORBIDDEN');
    expect((await ordersOf(app, token, login, 'open')).map((o) => o.order)).toEqual(tickets);
    const allowed = await createStaff(app, ['close_position'], token);
    expect(expectOk(await bulkClose(app, allowed.token, { login }), 200).closed).toEqual(tickets);
  });

  test('when the login is unknown, then it is 404', async () => {
    expectError(await bulkClose(app, token, { login: 77777777 }), 404, 'NOT_FOUND');
  });

  test('when the body is invalid, then it is 422 at the field', async () => {
    expect422(await bulkClose(app, token, {}), ['body', 'login'], 'missing');
    expect422(await bulkClose(app, token, { comment: 'x' }), ['body', 'login'], 'missing');
    expect422(await bulkClose(app, token, { login: 'abc' }), ['body', 'login'], 'int_type');
    expect422(await bulkClose(app, token, { login: 1.5 }), ['body', 'login'], 'int_type');
    expect422(await bulkClose(app, token, { login: 0 }), ['body', 'login'], 'greater_than_equal');
    const login = await fundedAccount(app, token, customer.id, market.groupId, 0);
    expect422(await bulkClose(app, token, { login, comment: 'x'.repeat(256) }), ['body', 'comment'], 'string_too_long');
  });

  test('when a run id is unknown, then GET is 404; a customer reading a run is 403', async () => {
    expectError(await app.request('GET', '/orders/bulk-close/00000000-0000-4000-8000-000000000000', { token }), 404, 'NOT_FOUND');
    const login = await fundedAccount(app, token, customer.id, market.groupId, 0);
    const body = expectOk(await bulkClose(app, token, { login }), 200);
    expectError(await app.request('GET', `/orders/bulk-close/${body.id}`, { token: customer.token }), 403, 'FORBIDDEN');
  });
});

describe('bulk close past its wait bound (BULK_CLOSE_WAIT_MS=1)', () => {
  let app: TestApp;
  let token: string;
  let market: Market;

  beforeAll(async () => {
    app = await startTestApp({ label: 'bulkslow', env: { BULK_CLOSE_WAIT_MS: '1' } });
    token = await adminToken(app);
    market = await setUpMarket(app, token);
  });
  afterAll(() => app?.stop());
  afterEach(() => expectLedgerBalanced(app));

  test('when the jobs outlast the bound, then it answers 202 {id, status_url} and the status URL shows the full result when done', async () => {
    const customer = await createCustomer(app, token);
    const login = await fundedAccount(app, token, customer.id, market.groupId, 10_000);
    const tickets: number[] = [];
    for (let i = 0; i < 12; i++) tickets.push(await openOrder(app, token, login, i % 2 === 0 ? 0 : 1, 0.1));
    const noQuote = await openOrder(app, token, login, 0, 0.1, 'USDJPY');
    expectOk(await app.request('DELETE', '/simulator/quotes/USDJPY', { token }), 204);
    const res = await bulkClose(app, token, { login });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), status_url: `/orders/bulk-close/${res.body.id}` });
    const done = await waitFor(
      'bulk close completed',
      async () => {
        const r = expectOk(await app.request('GET', res.body.status_url, { token }), 200);
        return r.status === 'completed' ? r : undefined;
      },
      20_000,
    );
    expect(done).toMatchObject({ id: res.body.id, login, status: 'completed' });
    expect(sorted(done.closed)).toEqual(sorted(tickets));
    expect(done.failed).toEqual([{ ticket: noQuote, reason: expect.stringMatching(/USDJPY/) }]);
    for (const t of tickets) expect(await ledgerRowsForTicket(app, t)).toBe(1);
  });
});

describe('bulk close whose jobs run later (an API-only instance, then a worker)', () => {
  let api: TestApp;
  let worker: TestApp | undefined;
  let token: string;
  let market: Market;

  beforeAll(async () => {
    api = await startTestApp({ label: 'bulklater', env: { ROLE: 'api', BULK_CLOSE_WAIT_MS: '1' } });
    token = await adminToken(api);
    market = await setUpMarket(api, token);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.stop();
  });
  afterEach(() => expectLedgerBalanced(api));

  test('when a ticket is closed by hand before its job runs, then the run counts it closed and it is booked once', async () => {
    const customer = await createCustomer(api, token);
    const login = await fundedAccount(api, token, customer.id, market.groupId, 10_000);
    const tickets: number[] = [];
    for (let i = 0; i < 4; i++) tickets.push(await openOrder(api, token, login, 0, 0.1));
    const res = await bulkClose(api, token, { login });
    expect(res.status).toBe(202);
    // No worker yet: the run is running and nothing is decided.
    const running = expectOk(await api.request('GET', res.body.status_url, { token }), 200);
    expect(running).toMatchObject({ status: 'running', closed: [], failed: [] });

    await setQuote(api, token, 'EURUSD', 1.101, 1.1012);
    const manual = expectOk(await api.request('POST', `/orders/${tickets[0]}/close`, { token }), 200);
    expect(manual).toMatchObject({ close_reason: 'manual', profit: '8.00' });

    worker = await startTestApp({ shareWith: api, env: { ROLE: 'worker' } });
    const done = await waitFor(
      'bulk close completed by the worker',
      async () => {
        const r = expectOk(await api.request('GET', res.body.status_url, { token }), 200);
        return r.status === 'completed' ? r : undefined;
      },
      20_000,
    );
    expect(sorted(done.closed)).toEqual(sorted(tickets));
    expect(done.failed).toEqual([]);
    for (const t of tickets) expect(await ledgerRowsForTicket(api, t)).toBe(1);
    const orders = await ordersOf(api, token, login);
    const first = orders.find((o) => o.order === tickets[0])!;
    // The manual close stands: not re-closed by the run.
    expect(first).toMatchObject({ status: 'closed', close_reason: 'manual', profit: '8.00' });
    expect(orders.filter((o) => o.close_reason === 'bulk_close')).toHaveLength(3);
    expect(expectOk(await api.request('GET', `/api/crm/accounts/${login}`, { token }), 200).balance).toBe('10032.00');
  });
});
