import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, setQuote, setUpMarket, type Market } from '../../helpers/trading';
import { accountState, expectNoOverdraft, walletOf } from '../money/money-kit';
import { eventsOf, expect422, expectError, expectOk, ledgerOf } from '../trading/trading-kit';

/**
 * Prop payouts: a payout reserves at most the prop
 * account's profit (the smaller of balance and equity, less its first deposit, less pending
 * payouts), approving moves
 * the money from the prop account to the customer's wallet through the ledger, rejecting
 * frees the reserve; both are terminal and happen once, audited, with events.
 */
let app: TestApp;
let admin: string;
let market: Market;
let manager: LoggedIn;

const VIEW_FIELDS = ['amount', 'created_at', 'currency', 'decided_at', 'decided_by', 'id', 'login', 'reason', 'status'];

/**
 * A customer with a prop account funded with `deposit` (its starting balance) that then earned
 * a profit by trading: one lot of EURUSD bought at 1.10020 and sold at 1.12000.
 */
async function propWithProfit(
  currency?: string,
  deposit = 10000,
): Promise<{ customer: LoggedIn; prop: number; wallet: number; profit: string }> {
  const customer = await createCustomer(app, admin);
  const opened = await app.request('POST', `/api/crm/customers/${customer.id}/accounts`, {
    token: admin,
    body: { kind: 'prop', group_id: market.groupId, ...(currency ? { currency } : {}) },
  });
  const prop = expectOk(opened, 201).login as number;
  expectOk(
    await app.request('POST', `/api/backoffice/accounts/${prop}/deposits`, { token: admin, body: { amount: deposit } }),
    201,
  );
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
  const order = expectOk(
    await app.request('POST', '/orders', { token: customer.token, body: { login: prop, symbol: 'EURUSD', cmd: 0, volume: 1 } }),
    201,
  );
  await setQuote(app, admin, 'EURUSD', 1.12, 1.1202);
  expectOk(await app.request('POST', `/orders/${order.order}/close`, { token: customer.token }), 200);
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
  const state = await accountState(app, prop);
  const profit = (Number(state.balance) - deposit).toFixed(2);
  return { customer, prop, wallet: await walletOf(app, customer), profit };
}

function requestPayout(token: string, login: number, amount: unknown, key?: string) {
  return app.request('POST', '/prop/payouts', {
    token,
    body: { login, amount },
    headers: key ? { 'idempotency-key': key } : {},
  });
}

function decide(token: string, id: string, decision: 'approve' | 'reject', reason: unknown = 'Broke the consistency rule') {
  return app.request('POST', `/prop/payouts/${id}/${decision}`, {
    token,
    body: decision === 'reject' ? { reason } : undefined,
  });
}

async function auditOf(id: string): Promise<Array<{ action: string; before: any; after: any; actor_id: string }>> {
  return expectOk(await app.request('GET', `/api/admin/audit?entity_type=payout&entity_id=${id}`, { token: admin }), 200).items;
}

beforeAll(async () => {
  app = await startTestApp({ label: 'payouts', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  market = await setUpMarket(app, admin);
  manager = await createStaff(app, ['manage_payouts'], admin);
});
afterAll(() => app?.stop());
afterEach(async () => {
  await expectLedgerBalanced(app);
  await expectNoOverdraft(app);
});

describe('requesting a payout', () => {
  test('when a customer asks for part of its profit, then 201 pending, the amount reserved, an event, and no money moved yet', async () => {
    const { customer, prop, profit } = await propWithProfit();
    expect(Number(profit)).toBeGreaterThan(1000);
    const body = expectOk(await requestPayout(customer.token, prop, 500.5), 201);
    expect(Object.keys(body).sort()).toEqual(VIEW_FIELDS);
    expect(body).toMatchObject({
      login: prop,
      amount: '500.50',
      currency: 'USD',
      status: 'pending',
      reason: null,
      decided_at: null,
    });
    expect(await accountState(app, prop)).toMatchObject({ reserved: '500.50', balance: (10000 + Number(profit)).toFixed(2) });
    expect((await ledgerOf(app, prop)).map((r) => r.kind)).toEqual(['deposit', 'trade_profit']);
    const events = await eventsOf(app, 'payout.requested', body.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ aggregate_type: 'payout', customer_id: customer.id, data: body });
  });

  test('when requests add up past the profit, then the one that does not fit is 422 at amount saying what is left', async () => {
    const { customer, prop, profit } = await propWithProfit();
    expectOk(await requestPayout(customer.token, prop, 1000), 201);
    const left = (Number(profit) - 1000).toFixed(2);
    const res = await requestPayout(customer.token, prop, Number(left) + 0.01);
    expect422(res, ['body', 'amount']);
    expect(res.body.detail[0].msg).toContain(`${left} USD available`);
    expectOk(await requestPayout(customer.token, prop, Number(left)), 201);
    expect((await accountState(app, prop)).reserved).toBe(profit);
    // The starting balance (the first deposit) is never payable.
    expect422(await requestPayout(customer.token, prop, 0.01), ['body', 'amount']);
  });

  test('when the account has only its starting balance, then nothing is payable: 422 at amount', async () => {
    const customer = await createCustomer(app, admin);
    const opened = await app.request('POST', `/api/crm/customers/${customer.id}/accounts`, {
      token: admin,
      body: { kind: 'prop', group_id: market.groupId },
    });
    const prop = expectOk(opened, 201).login as number;
    expectOk(
      await app.request('POST', `/api/backoffice/accounts/${prop}/deposits`, { token: admin, body: { amount: 5000 } }),
      201,
    );
    expect422(await requestPayout(customer.token, prop, 1), ['body', 'amount']);
  });

  test('when the login is not a prop account, or another customer’s, then 422 at login or 404', async () => {
    const { customer, wallet } = await propWithProfit();
    const other = await propWithProfit();
    expect422(await requestPayout(customer.token, wallet, 1), ['body', 'login']);
    expectError(await requestPayout(customer.token, other.prop, 1), 404, 'NOT_FOUND');
    expectError(await requestPayout(customer.token, 999999999, 1), 404, 'NOT_FOUND');
  });

  test.each([
    ['a zero amount', { login: 100001, amount: 0 }, ['body', 'amount']],
    ['three decimals', { login: 100001, amount: 1.005 }, ['body', 'amount']],
    ['no login', { amount: 1 }, ['body', 'login']],
    ['a login as a word', { login: 'abc', amount: 1 }, ['body', 'login']],
  ])('when the body has %s, then 422 at that field', async (_what, body, loc) => {
    expect422(await app.request('POST', '/prop/payouts', { token: manager.token, body }), loc);
  });

  test('when an open losing position brings equity below the balance, then the loss counts against the payable profit', async () => {
    const { customer, prop, profit } = await propWithProfit();
    expect(Number(profit)).toBeGreaterThan(1000);
    expectOk(
      await app.request('POST', '/orders', { token: customer.token, body: { login: prop, symbol: 'EURUSD', cmd: 0, volume: 1 } }),
      201,
    );
    // Bought at 1.1002, now bid 1.095: about 520 USD lost while the position stays open.
    await setQuote(app, admin, 'EURUSD', 1.095, 1.0952);
    try {
      const view = expectOk(await app.request('GET', `/api/crm/accounts/${prop}`, { token: admin }), 200);
      expect(Number(view.balance)).toBe(10000 + Number(profit));
      expect(Number(view.equity)).toBeLessThan(Number(view.balance) - 500);
      const available = (Number(view.equity) - 10000).toFixed(2);
      // The balance alone would allow the whole profit: the open loss is not the account's to pay out.
      const whole = await requestPayout(customer.token, prop, Number(profit));
      expect422(whole, ['body', 'amount']);
      expect(whole.body.detail[0].msg).toContain(`${available} USD available`);
      expect422(await requestPayout(customer.token, prop, Number(available) + 0.01), ['body', 'amount']);
      expect((await accountState(app, prop)).reserved).toBe('0.00');
      expectOk(await requestPayout(customer.token, prop, Number(available)), 201);
      expect((await accountState(app, prop)).reserved).toBe(available);
    } finally {
      await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
    }
  });

  test('when an open position is winning, then the open gain is not payable: the balance caps the profit', async () => {
    const { customer, prop, profit } = await propWithProfit();
    expectOk(
      await app.request('POST', '/orders', { token: customer.token, body: { login: prop, symbol: 'EURUSD', cmd: 0, volume: 1 } }),
      201,
    );
    await setQuote(app, admin, 'EURUSD', 1.11, 1.1102);
    try {
      const view = expectOk(await app.request('GET', `/api/crm/accounts/${prop}`, { token: admin }), 200);
      expect(Number(view.equity)).toBeGreaterThan(Number(view.balance) + 500);
      expect422(await requestPayout(customer.token, prop, Number(profit) + 0.01), ['body', 'amount']);
      expectOk(await requestPayout(customer.token, prop, Number(profit)), 201);
    } finally {
      await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
    }
  });

  test('when 20 requests of a tenth of the profit race, then exactly 10 are reserved and the rest are 422', async () => {
    const { customer, prop, profit } = await propWithProfit();
    const tenth = Math.floor((Number(profit) / 10) * 100) / 100;
    const answers = await Promise.all(Array.from({ length: 20 }, () => requestPayout(customer.token, prop, tenth)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(10);
    for (const r of answers.filter((a) => a.status !== 201)) expect422(r, ['body', 'amount']);
    expect((await accountState(app, prop)).reserved).toBe((tenth * 10).toFixed(2));
  });

  test('when staff with manage_payouts ask for a customer, then it is recorded as theirs and audited; staff without are 403', async () => {
    const { prop } = await propWithProfit();
    const nobody = await createStaff(app, ['view_orders'], admin);
    expectError(await requestPayout(nobody.token, prop, 10), 403, 'FORBIDDEN');
    const body = expectOk(await requestPayout(manager.token, prop, 10), 201);
    const audit = await auditOf(body.id);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: 'payout.requested', actor_id: manager.id, after: body });
  });

  test('when the same Idempotency-Key and body come twice, then one payout is reserved and the answer replayed', async () => {
    const { customer, prop } = await propWithProfit();
    const first = expectOk(await requestPayout(customer.token, prop, 30, 'po-1'), 201);
    const second = await requestPayout(customer.token, prop, 30, 'po-1');
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect((await accountState(app, prop)).reserved).toBe('30.00');
    expect422(await requestPayout(customer.token, prop, 31, 'po-1'), ['header', 'Idempotency-Key']);
  });
});

describe('deciding a payout', () => {
  test('when staff approve, then the prop account pays the wallet through the ledger, once, audited, with an event', async () => {
    const { customer, prop, wallet, profit } = await propWithProfit();
    const { id } = expectOk(await requestPayout(customer.token, prop, 750.25), 201);
    const body = expectOk(await decide(manager.token, id, 'approve'), 200);
    expect(Object.keys(body).sort()).toEqual(VIEW_FIELDS);
    expect(body).toMatchObject({ id, status: 'approved', amount: '750.25', reason: null, decided_by: manager.id });
    expect(new Date(body.decided_at).toISOString()).toBe(body.decided_at);
    expect(await accountState(app, prop)).toMatchObject({
      balance: (10000 + Number(profit) - 750.25).toFixed(2),
      reserved: '0.00',
    });
    expect(await accountState(app, wallet)).toMatchObject({ balance: '750.25', reserved: '0.00' });
    const propLedger = await ledgerOf(app, prop);
    expect(propLedger.at(-1)).toMatchObject({ kind: 'payout', amount: '-750.25', reference_type: 'payout', reference_id: id });
    expect(await ledgerOf(app, wallet)).toEqual([
      expect.objectContaining({ kind: 'payout', amount: '750.25', balance_after: '750.25', reference_id: id }),
    ]);
    expect((await eventsOf(app, 'payout.approved', id)).map((e) => e.data)).toEqual([body]);
    const audit = await auditOf(id);
    expect(audit.map((a) => a.action)).toEqual(['payout.approved']);
    expect(audit[0]).toMatchObject({ actor_id: manager.id, after: body, before: { status: 'pending' } });

    expectError(await decide(manager.token, id, 'approve'), 409, 'PAYOUT_NOT_PENDING');
    expectError(await decide(manager.token, id, 'reject'), 409, 'PAYOUT_NOT_PENDING');
    expect((await accountState(app, wallet)).balance).toBe('750.25');
  });

  test('when staff reject with a reason, then the answer is the payout, the reserve is freed and it stays rejected', async () => {
    const { customer, prop, profit } = await propWithProfit();
    const { id } = expectOk(await requestPayout(customer.token, prop, 100), 201);
    const reason = 'r'.repeat(500);
    const body = expectOk(await decide(manager.token, id, 'reject', reason), 200);
    expect(Object.keys(body).sort()).toEqual(VIEW_FIELDS);
    expect(body).toMatchObject({ id, login: prop, status: 'rejected', reason, decided_by: manager.id, currency: 'USD' });
    expect(await accountState(app, prop)).toMatchObject({ reserved: '0.00', balance: (10000 + Number(profit)).toFixed(2) });
    expect((await eventsOf(app, 'payout.rejected', id)).map((e) => e.data)).toEqual([body]);
    expect((await auditOf(id)).map((a) => a.action)).toEqual(['payout.rejected']);
    expectError(await decide(manager.token, id, 'reject'), 409, 'PAYOUT_NOT_PENDING');
    expectError(await decide(manager.token, id, 'approve'), 409, 'PAYOUT_NOT_PENDING');
    // The freed reserve is payable again.
    expectOk(await requestPayout(customer.token, prop, Number(profit)), 201);
  });

  test.each([
    ['an empty reason', ''],
    ['a reason of 501 characters', 'x'.repeat(501)],
    ['a reason that is a number', 42],
  ])('when the reject has %s, then 422 at reason and the payout stays pending', async (_what, reason) => {
    const { customer, prop } = await propWithProfit();
    const { id } = expectOk(await requestPayout(customer.token, prop, 5), 201);
    expect422(await decide(manager.token, id, 'reject', reason), ['body', 'reason']);
    expect422(await app.request('POST', `/prop/payouts/${id}/reject`, { token: manager.token, body: {} }), ['body', 'reason']);
    expect((await accountState(app, prop)).reserved).toBe('5.00');
  });

  test('when a customer, or staff without manage_payouts, try to decide, then 403; an unknown payout is 404', async () => {
    const { customer, prop } = await propWithProfit();
    const { id } = expectOk(await requestPayout(customer.token, prop, 5), 201);
    expectError(await decide(customer.token, id, 'approve'), 403, 'FORBIDDEN');
    const approver = await createStaff(app, ['approve_withdrawals'], admin);
    expectError(await decide(approver.token, id, 'reject'), 403, 'FORBIDDEN');
    expectError(await decide(manager.token, '00000000-0000-4000-8000-000000000000', 'approve'), 404, 'NOT_FOUND');
  });

  test('when an approve and a reject race, then exactly one wins, the other is 409, and the money moves at most once', async () => {
    for (let round = 0; round < 5; round++) {
      const { customer, prop, wallet } = await propWithProfit();
      const { id } = expectOk(await requestPayout(customer.token, prop, 100), 201);
      const [approve, reject] = await Promise.all([decide(manager.token, id, 'approve'), decide(admin, id, 'reject')]);
      const statuses = [approve.status, reject.status].sort();
      expect(statuses).toEqual([200, 409]);
      const loser = approve.status === 409 ? approve : reject;
      expect(loser.body.code).toBe('PAYOUT_NOT_PENDING');
      expect((await accountState(app, wallet)).balance).toBe(approve.status === 200 ? '100.00' : '0.00');
      expect((await accountState(app, prop)).reserved).toBe('0.00');
      const decided = [...(await eventsOf(app, 'payout.approved', id)), ...(await eventsOf(app, 'payout.rejected', id))];
      expect(decided).toHaveLength(1);
    }
  });

  test('when losses since the request leave less profit than the payout, then approving is 409 PAYOUT_EXCEEDS_PROFIT', async () => {
    const { customer, prop, profit } = await propWithProfit();
    const { id } = expectOk(await requestPayout(customer.token, prop, Number(profit)), 201);
    const order = expectOk(
      await app.request('POST', '/orders', { token: customer.token, body: { login: prop, symbol: 'EURUSD', cmd: 0, volume: 1 } }),
      201,
    );
    await setQuote(app, admin, 'EURUSD', 1.09, 1.0902);
    expectOk(await app.request('POST', `/orders/${order.order}/close`, { token: customer.token }), 200);
    await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
    expectError(await decide(manager.token, id, 'approve'), 409, 'PAYOUT_EXCEEDS_PROFIT');
    expectOk(await decide(manager.token, id, 'reject', 'Profit gone'), 200);
  });

  test('when a position opened since the request is losing, then approving is 409 PAYOUT_EXCEEDS_PROFIT and nothing moves', async () => {
    const { customer, prop, wallet, profit } = await propWithProfit();
    const { id } = expectOk(await requestPayout(customer.token, prop, Number(profit)), 201);
    expectOk(
      await app.request('POST', '/orders', { token: customer.token, body: { login: prop, symbol: 'EURUSD', cmd: 0, volume: 1 } }),
      201,
    );
    await setQuote(app, admin, 'EURUSD', 1.095, 1.0952);
    try {
      const before = await accountState(app, prop);
      expectError(await decide(manager.token, id, 'approve'), 409, 'PAYOUT_EXCEEDS_PROFIT');
      expect(await accountState(app, prop)).toEqual(before);
      expect((await accountState(app, wallet)).balance).toBe('0.00');
    } finally {
      await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
    }
    expectOk(await decide(manager.token, id, 'reject', 'Open loss'), 200);
  });

  test('when the amount converts to less than a cent of the wallet currency, then 409 PAYOUT_TOO_SMALL and nothing moves', async () => {
    const { customer, prop, wallet } = await propWithProfit('JPY', 10_000_000);
    // 0.01 JPY at USDJPY 150 is under a hundredth of a US cent.
    const { id } = expectOk(await requestPayout(customer.token, prop, 0.01), 201);
    const before = await accountState(app, wallet);
    expectError(await decide(manager.token, id, 'approve'), 409, 'PAYOUT_TOO_SMALL');
    expect(await accountState(app, wallet)).toEqual(before);
    expectOk(await decide(manager.token, id, 'reject', 'Below a cent'), 200);
  });

  test('when the prop account is in EUR, then the wallet is credited at the dealer bid like a transfer, cut to the cent, and the rate is kept', async () => {
    const { customer, prop, wallet } = await propWithProfit('EUR');
    const { id, currency } = expectOk(await requestPayout(customer.token, prop, 100.05), 201);
    expect(currency).toBe('EUR');
    expectOk(await decide(manager.token, id, 'approve'), 200);
    // EURUSD bid 1.10: 100.05 EUR x 1.10 = 110.055 USD, cut toward zero (half-even would have paid 110.06).
    expect((await accountState(app, wallet)).balance).toBe('110.05');
    const [row] = await sql<Record<string, string>>(
      app,
      `select wallet_amount::text, wallet_currency, rate_source, rate_multiplier::text, rate_divisor::text from payouts where id = ?`,
      [id],
    );
    expect(row).toEqual({
      wallet_amount: '110.05',
      wallet_currency: 'USD',
      rate_source: 'EURUSD',
      rate_multiplier: '1.1',
      rate_divisor: '1',
    });
  });
});

describe('listing payouts', () => {
  test('when a customer lists, then it sees only its own; staff see all and filter by status, login and customer', async () => {
    const a = await propWithProfit();
    const b = await propWithProfit();
    const pa = expectOk(await requestPayout(a.customer.token, a.prop, 1), 201);
    const pb = expectOk(await requestPayout(b.customer.token, b.prop, 2), 201);
    expectOk(await decide(manager.token, pb.id, 'reject'), 200);

    const mine = expectOk(await app.request('GET', '/prop/payouts', { token: a.customer.token }), 200);
    expect(mine.items.map((p: { id: string }) => p.id)).toEqual([pa.id]);
    expect(mine.total).toBe(1);
    const snoop = expectOk(
      await app.request('GET', `/prop/payouts?customer_id=${b.customer.id}`, { token: a.customer.token }),
      200,
    );
    expect(snoop.items).toEqual([]);
    expectError(await app.request('GET', `/prop/payouts/${pb.id}`, { token: a.customer.token }), 404, 'NOT_FOUND');
    expect(expectOk(await app.request('GET', `/prop/payouts/${pa.id}`, { token: a.customer.token }), 200)).toEqual(pa);

    const byLogin = expectOk(await app.request('GET', `/prop/payouts?login=${b.prop}`, { token: manager.token }), 200);
    expect(byLogin.items.map((p: { id: string; status: string }) => [p.id, p.status])).toEqual([[pb.id, 'rejected']]);
    const byCustomer = expectOk(
      await app.request('GET', `/prop/payouts?customer_id=${a.customer.id}`, { token: manager.token }),
      200,
    );
    expect(byCustomer.items.map((p: { id: string }) => p.id)).toEqual([pa.id]);
    const rejected = expectOk(
      await app.request('GET', '/prop/payouts?status=rejected&page_size=200', { token: manager.token }),
      200,
    );
    expect(rejected.items.every((p: { status: string }) => p.status === 'rejected')).toBe(true);
    expect(rejected.items.map((p: { id: string }) => p.id)).toContain(pb.id);
    expect422(await app.request('GET', '/prop/payouts?status=paid', { token: manager.token }), ['query', 'status']);
  });
});
