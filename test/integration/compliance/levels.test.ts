import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { expectLedgerBalanced, fundedAccount, setUpMarket } from '../../helpers/trading';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { accountState, expectNoOverdraft, transfer, walletOf, withdraw } from '../money/money-kit';
import { expect422, expectError, expectOk } from '../trading/trading-kit';
import { setLevelTerms } from './compliance-kit';

/**
 * Verification levels: the configuration routes, the defaults that keep
 * today's behaviour, and enforcement on every path that moves money or opens risk: 403
 * VERIFICATION_REQUIRED for what a level may not do, 422 at `amount` past a limit, race-free.
 */
jest.setTimeout(90_000);

let app: TestApp;
let admin: string;
let groupId: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'levels' });
  admin = await adminToken(app);
  ({ groupId } = await setUpMarket(app, admin));
});
afterAll(() => app?.stop());
afterEach(async () => {
  for (const level of [0, 1, 2, 3]) await setLevelTerms(app, admin, level, {});
  await expectLedgerBalanced(app);
  await expectNoOverdraft(app);
});

async function customerWithMoney(amount = 1000): Promise<{ customer: LoggedIn; wallet: number; live: number }> {
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  if (amount > 0)
    expectOk(await app.request('POST', `/api/backoffice/accounts/${wallet}/deposits`, { token: admin, body: { amount } }), 201);
  const live = await fundedAccount(app, admin, customer.id, groupId, 1000);
  return { customer, wallet, live };
}

const orderBody = (login: number) => ({ login, symbol: 'EURUSD', cmd: 0, volume: 0.01 });
const pendingBody = (login: number) => ({ login, symbol: 'EURUSD', cmd: 2, volume: 0.01, trigger_price: 1.05 });

describe('the configuration', () => {
  test('when nothing is set, then every level may trade and withdraw without limits or documents', async () => {
    const res = expectOk(await app.request('GET', '/api/admin/verification-levels', { token: admin }), 200);
    expect(res.items.map((l: Record<string, unknown>) => ({ ...l, updated_at: undefined }))).toEqual(
      [0, 1, 2, 3].map((level) => ({
        level,
        required_documents: [],
        can_trade: true,
        can_withdraw: true,
        max_deposit_per_day: null,
        max_withdrawal_per_day: null,
        max_withdrawal_per_month: null,
        updated_at: undefined,
      })),
    );
    const customer = await createCustomer(app, admin);
    expect(expectOk(await app.request('GET', '/customers/me', { token: customer.token }), 200).verification_level).toBe(0);
  });

  test('when a level is set, then it is stored as sent (limits as money text), audited, and needs manage_settings', async () => {
    const set = await app.request('PUT', '/api/admin/verification-levels/2', {
      token: admin,
      body: {
        required_documents: ['identity', 'address', 'identity'],
        can_trade: true,
        can_withdraw: false,
        max_deposit_per_day: 5000,
        max_withdrawal_per_day: 1000.5,
      },
    });
    expect(expectOk(set, 200)).toMatchObject({
      level: 2,
      required_documents: ['identity', 'address'],
      can_withdraw: false,
      max_deposit_per_day: '5000.00',
      max_withdrawal_per_day: '1000.50',
      max_withdrawal_per_month: null,
    });
    const audit = expectOk(
      await app.request('GET', '/api/admin/audit?entity_type=verification_level&entity_id=2', { token: admin }),
      200,
    );
    expect(audit.items[0]).toMatchObject({ action: 'verification_level.updated', after: { can_withdraw: false } });
    const clerk = await createStaff(app, ['view_customers'], admin);
    expectError(await app.request('GET', '/api/admin/verification-levels', { token: clerk.token }), 403, 'FORBIDDEN');
    expectError(
      await app.request('PUT', '/api/admin/verification-levels/1', {
        token: clerk.token,
        body: { required_documents: [], can_trade: true, can_withdraw: true },
      }),
      403,
      'FORBIDDEN',
    );
  });

  test('when a level is out of range, level 0 asks for documents, a type is unknown or a limit is bad, then 422 at the field', async () => {
    const ok = { required_documents: [], can_trade: true, can_withdraw: true };
    expect422(await app.request('PUT', '/api/admin/verification-levels/4', { token: admin, body: ok }), ['path', 'level']);
    expect422(
      await app.request('PUT', '/api/admin/verification-levels/0', {
        token: admin,
        body: { ...ok, required_documents: ['identity'] },
      }),
      ['body', 'required_documents'],
    );
    expect422(
      await app.request('PUT', '/api/admin/verification-levels/1', {
        token: admin,
        body: { ...ok, required_documents: ['passport'] },
      }),
      ['body', 'required_documents', 0],
    );
    expect422(
      await app.request('PUT', '/api/admin/verification-levels/1', { token: admin, body: { ...ok, max_withdrawal_per_day: -1 } }),
      ['body', 'max_withdrawal_per_day'],
    );
    expect422(
      await app.request('PUT', '/api/admin/verification-levels/1', {
        token: admin,
        body: { ...ok, max_withdrawal_per_day: 200, max_withdrawal_per_month: 100 },
      }),
      ['body', 'max_withdrawal_per_day'],
    );
    expect422(await app.request('PUT', '/api/admin/verification-levels/1', { token: admin, body: { can_trade: true } }), [
      'body',
      'can_withdraw',
    ]);
  });
});

describe('a level that may not trade', () => {
  test('when its customer opens an order, places a pending order or transfers, then 403 VERIFICATION_REQUIRED and nothing moves; staff still may; level 1 may', async () => {
    const { customer, wallet, live } = await customerWithMoney();
    await setLevelTerms(app, admin, 0, { can_trade: false });
    const before = await accountState(app, live);

    expectError(
      await app.request('POST', '/orders', { token: customer.token, body: orderBody(live) }),
      403,
      'VERIFICATION_REQUIRED',
    );
    expectError(
      await app.request('POST', '/orders/pending', { token: customer.token, body: pendingBody(live) }),
      403,
      'VERIFICATION_REQUIRED',
    );
    expectError(await transfer(app, customer, wallet, live, 10), 403, 'VERIFICATION_REQUIRED');
    expect(await accountState(app, live)).toEqual(before);
    const [orders] = await sql<{ n: number }>(
      app,
      'select count(*)::int as n from orders o join accounts a on a.id = o.account_id where a.login = ?',
      [live],
    );
    expect(orders!.n).toBe(0);

    // Staff open for the customer: the desk's decision.
    expectOk(await app.request('POST', '/orders', { token: admin, body: orderBody(live) }), 201);
    // Withdrawing is another right.
    expectOk(await withdraw(app, customer, 5), 202);

    // Raised to a level that may trade, the customer trades at once.
    expectOk(
      await app.request('PATCH', `/api/crm/customers/${customer.id}`, { token: admin, body: { verification_level: 1 } }),
      200,
    );
    expectOk(await app.request('POST', '/orders', { token: customer.token, body: orderBody(live) }), 201);
    expectOk(await app.request('POST', '/orders/pending', { token: customer.token, body: pendingBody(live) }), 201);
    expectOk(await transfer(app, customer, wallet, live, 10), 200);
  });
});

describe('several API processes', () => {
  test('when one process changes a level, then it refuses at once and another within about a second', async () => {
    const second = await startTestApp({ shareWith: app, env: { ROLE: 'api' } });
    try {
      const { customer, live } = await customerWithMoney();
      // The second process has read the levels (defaults) and keeps its copy.
      expectOk(await second.request('POST', '/orders', { token: customer.token, body: orderBody(live) }), 201);
      await setLevelTerms(app, admin, 0, { can_trade: false });
      expectError(
        await app.request('POST', '/orders', { token: customer.token, body: orderBody(live) }),
        403,
        'VERIFICATION_REQUIRED',
      );
      const changedAt = Date.now();
      const refused = await waitFor('the second process to refuse', async () => {
        const res = await second.request('POST', '/orders', { token: customer.token, body: orderBody(live) });
        return res.status === 403 ? res : undefined;
      });
      expectError(refused, 403, 'VERIFICATION_REQUIRED');
      expect(Date.now() - changedAt).toBeLessThan(3000);
    } finally {
      await second.stop();
    }
  });
});

describe('a level that may not withdraw', () => {
  test('when its customer asks for a withdrawal or a payout, then 403 VERIFICATION_REQUIRED and nothing is reserved', async () => {
    const { customer, wallet } = await customerWithMoney();
    const prop = expectOk(
      await app.request('POST', `/api/crm/customers/${customer.id}/accounts`, {
        token: admin,
        body: { kind: 'prop', group_id: groupId },
      }),
      201,
    ).login as number;
    expectOk(
      await app.request('POST', `/api/backoffice/accounts/${prop}/deposits`, { token: admin, body: { amount: 500 } }),
      201,
    );
    await setLevelTerms(app, admin, 0, { can_withdraw: false });

    expectError(await withdraw(app, customer, 10), 403, 'VERIFICATION_REQUIRED');
    expectError(
      await app.request('POST', '/prop/payouts', { token: customer.token, body: { login: prop, amount: 1 } }),
      403,
      'VERIFICATION_REQUIRED',
    );
    expect((await accountState(app, wallet)).reserved).toBe('0.00');
    // Trading is another right.
    expectOk(
      await transfer(app, customer, wallet, (await fundedAccount(app, admin, customer.id, groupId, 0)) as number, 10),
      200,
    );

    await setLevelTerms(app, admin, 0, {});
    expectOk(await withdraw(app, customer, 10), 202);
    // Allowed again, the payout is judged on its merits: no profit yet.
    expect422(await app.request('POST', '/prop/payouts', { token: customer.token, body: { login: prop, amount: 1 } }), [
      'body',
      'amount',
    ]);
  });
});

describe('limits', () => {
  test('when withdrawals pass the daily or monthly limit, counting pending and completed but not rejected, then 422 at amount', async () => {
    const { customer } = await customerWithMoney(5000);
    await setLevelTerms(app, admin, 0, { max_withdrawal_per_day: 300, max_withdrawal_per_month: 400 });
    const first = expectOk(await withdraw(app, customer, 200), 202);
    expectOk(await app.request('POST', `/api/backoffice/withdrawals/${first.transaction_id}/approve`, { token: admin }), 200);
    const second = expectOk(await withdraw(app, customer, 100), 202);
    const over = await withdraw(app, customer, 0.01);
    expect422(over, ['body', 'amount']);
    expect(over.body.detail[0].msg).toMatch(/daily withdrawal limit.*0\.00 USD left of 300\.00 USD/);
    // A rejected withdrawal frees its share of the limit.
    expectOk(
      await app.request('POST', `/api/backoffice/withdrawals/${second.transaction_id}/reject`, {
        token: admin,
        body: { reason: 'No' },
      }),
      200,
    );
    expectOk(await withdraw(app, customer, 100), 202);
    // The completed 200.00 moved to the start of the month: today counts 100.00, the month 300.00.
    await sql(
      app,
      "update withdrawals set created_at = date_trunc('month', now() at time zone 'utc') at time zone 'utc' where id = ?",
      [first.transaction_id],
    );
    await setLevelTerms(app, admin, 0, { max_withdrawal_per_day: 350, max_withdrawal_per_month: 350 });
    expectOk(await withdraw(app, customer, 50), 202);
    const monthly = await withdraw(app, customer, 0.01);
    expect422(monthly, ['body', 'amount']);
    // On the first of a month the moved withdrawal is still today's, and the daily limit speaks first.
    const firstOfMonth = new Date().getUTCDate() === 1;
    expect(monthly.body.detail[0].msg).toMatch(firstOfMonth ? /withdrawal limit/ : /monthly withdrawal limit/);
  });

  test('when ten withdrawals race against a daily limit, then exactly as many pass as fit', async () => {
    const { customer, wallet } = await customerWithMoney(5000);
    await setLevelTerms(app, admin, 0, { max_withdrawal_per_day: 100 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => withdraw(app, customer, 30)));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([202, 202, 202, 422, 422, 422, 422, 422, 422, 422]);
    for (const r of answers.filter((a) => a.status === 422)) expect422(r, ['body', 'amount']);
    expect((await accountState(app, wallet)).reserved).toBe('90.00');
  });

  test('when deposits pass the daily deposit limit, across accounts of one currency, then 422 at amount, racing or not', async () => {
    const { customer, wallet, live } = await customerWithMoney(0);
    await setLevelTerms(app, admin, 0, { max_deposit_per_day: 1500 });
    // customerWithMoney deposited 1000 into the live account today.
    expectOk(
      await app.request('POST', `/api/backoffice/accounts/${wallet}/deposits`, { token: admin, body: { amount: 400 } }),
      201,
    );
    const over = await app.request('POST', `/api/backoffice/accounts/${live}/deposits`, {
      token: admin,
      body: { amount: 100.01 },
    });
    expect422(over, ['body', 'amount']);
    expect(over.body.detail[0].msg).toMatch(/daily deposit limit.*100\.00 USD left of 1500\.00 USD/);
    const racing = await Promise.all(
      [wallet, live, wallet, live, wallet, live].map((login) =>
        app.request('POST', `/api/backoffice/accounts/${login}/deposits`, { token: admin, body: { amount: 40 } }),
      ),
    );
    expect(racing.filter((r) => r.status === 201)).toHaveLength(2);
    const [row] = await sql<{ total: string }>(
      app,
      `select sum(l.amount)::text as total from ledger_entries l join accounts a on a.id = l.account_id
        where a.customer_id = ? and l.kind = 'deposit'`,
      [customer.id],
    );
    expect(row!.total).toBe('1480.00');
  });
});
