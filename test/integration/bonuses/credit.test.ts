import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount } from '../../helpers/trading';
import { group, quote, usdInstrument } from '../trading/engine-kit';
import { eventsOf, expect422, expectOk } from '../trading/trading-kit';
import { transfer, walletOf } from '../money/money-kit';

jest.setTimeout(90_000);

/**
 * Credit, the non-withdrawable bucket: staff credit in and out, equity counting it, transfers
 * not, and a stop-out removing it before negative balance protection compensates.
 */
let app: TestApp;
let admin: string;
let groupId: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'credit' });
  admin = await adminToken(app);
  groupId = await group(app, admin, { margin_call_level: 100, stopout_level: 50 });
  await usdInstrument(app, admin, 'NZDUSD', 1.1, 1.1002);
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

function credit(login: number, body: Record<string, unknown>, key?: string) {
  return app.request('POST', `/api/backoffice/accounts/${login}/credit`, {
    token: admin,
    body,
    headers: key ? { 'idempotency-key': key } : {},
  });
}

async function creditRows(login: number) {
  return sql<{ kind: string; bucket: string; amount: string; balance_after: string; reference_type: string }>(
    app,
    `select l.kind, l.bucket, l.amount::text as amount, l.balance_after::text as balance_after, l.reference_type
       from ledger_entries l join accounts a on a.id = l.account_id where a.login = ? order by l.seq`,
    [login],
  );
}

async function customerWithLive(deposit: number): Promise<{ customer: LoggedIn; live: number }> {
  const customer = await createCustomer(app, admin);
  return { customer, live: await fundedAccount(app, admin, customer.id, groupId, deposit) };
}

test('when staff book credit in, then the account shows it beside the balance, equity counts it, and a replay books nothing twice', async () => {
  const { live } = await customerWithLive(50);
  const first = await credit(live, { direction: 'in', amount: 100, comment: 'Welcome credit' }, 'credit-once');
  expect(expectOk(first, 201, 'credit in')).toMatchObject({
    login: live,
    direction: 'in',
    amount: '100.00',
    balance: '50.00',
    credit: '100.00',
    reason: 'manual',
    comment: 'Welcome credit',
  });
  const again = await credit(live, { direction: 'in', amount: 100, comment: 'Welcome credit' }, 'credit-once');
  expect(again.status).toBe(201);
  expect(again.body).toEqual(first.body);

  const view = expectOk(await app.request('GET', `/api/crm/accounts/${live}`, { token: admin }), 200, 'account');
  expect(view).toMatchObject({ balance: '50.00', credit: '100.00', equity: '150.00', free_margin: '150.00' });
  expect((await creditRows(live)).filter((r) => r.bucket === 'credit')).toEqual([
    { kind: 'credit_in', bucket: 'credit', amount: '100.00', balance_after: '100.00', reference_type: 'credit' },
  ]);
  const events = await eventsOf(app, 'account.credit_changed', live);
  expect(events).toHaveLength(1);
  expect(events[0]!.data).toMatchObject({ credit: '100.00', direction: 'in', reason: 'manual' });
  const [audit] = await sql<{ n: number }>(
    app,
    `select count(*)::int as n from audit_entries where action = 'account.credit_in' and entity_id = ?`,
    [String(live)],
  );
  expect(audit!.n).toBe(1);
});

test('when staff take out more credit than there is, then 422 at amount and nothing moves; within it, the credit falls', async () => {
  const { live } = await customerWithLive(0);
  expectOk(await credit(live, { direction: 'in', amount: 30, comment: 'c' }), 201);
  expect422(await credit(live, { direction: 'out', amount: 30.01, comment: 'too much' }), ['body', 'amount']);
  expect(expectOk(await credit(live, { direction: 'out', amount: 10, comment: 'part' }), 201)).toMatchObject({ credit: '20.00' });
  expect422(await credit(live, { direction: 'sideways', amount: 1, comment: 'x' }), ['body', 'direction']);
  expect(expectOk(await app.request('GET', `/api/crm/accounts/${live}`, { token: admin }), 200)).toMatchObject({
    balance: '0.00',
    credit: '20.00',
  });
});

test('when a customer moves money out of an account holding credit, then only the balance can leave', async () => {
  const { customer, live } = await customerWithLive(50);
  const wallet = await walletOf(app, customer);
  expectOk(await credit(live, { direction: 'in', amount: 100, comment: 'c' }), 201);
  expect422(await transfer(app, customer, live, wallet, 50.01), ['body', 'amount']);
  expectOk(await transfer(app, customer, live, wallet, 50), 200);
  const mine = expectOk(await app.request('GET', '/customers/me/accounts', { token: customer.token }), 200);
  expect(mine.items.find((a: { login: number }) => a.login === live)).toMatchObject({ balance: '0.00', credit: '100.00' });
});

test('when a customer tries to move credit by hand, then the route is not theirs', async () => {
  const { customer, live } = await customerWithLive(0);
  const res = await app.request('POST', `/api/backoffice/accounts/${live}/credit`, {
    token: customer.token,
    body: { direction: 'in', amount: 1, comment: 'me' },
  });
  expect([401, 403]).toContain(res.status);
});

test('when a stop-out leaves nothing open and a negative balance, then the credit goes first, then the compensation', async () => {
  const { live } = await customerWithLive(100);
  expectOk(await credit(live, { direction: 'in', amount: 200, comment: 'bonus' }), 201);
  // 0.2 lots: 220.04 of margin against 300 of equity (balance and credit); credit carries the position.
  expectOk(
    await app.request('POST', '/orders', { token: admin, body: { login: live, symbol: 'NZDUSD', cmd: 0, volume: 0.2 } }),
    201,
  );
  // bid 1.085: the position loses 304, equity -4: stopped out, the balance left at -204.
  await quote(app, admin, 'NZDUSD', 1.085, 1.0852);
  const rows = await creditRows(live);
  expect(rows.slice(-3)).toEqual([
    { kind: 'trade_profit', bucket: 'balance', amount: '-304.00', balance_after: '-204.00', reference_type: 'order' },
    { kind: 'credit_out', bucket: 'credit', amount: '-200.00', balance_after: '0.00', reference_type: 'account' },
    {
      kind: 'negative_balance_compensation',
      bucket: 'balance',
      amount: '204.00',
      balance_after: '0.00',
      reference_type: 'account',
    },
  ]);
  const changed = await eventsOf(app, 'account.credit_changed', live);
  expect(changed.at(-1)!.data).toMatchObject({ direction: 'out', amount: '200.00', credit: '0.00', reason: 'stop_out' });
  expect(expectOk(await app.request('GET', `/api/crm/accounts/${live}`, { token: admin }), 200)).toMatchObject({
    balance: '0.00',
    credit: '0.00',
    equity: '0.00',
  });
  // Restore the quote for the other tests.
  await quote(app, admin, 'NZDUSD', 1.1, 1.1002);
});
