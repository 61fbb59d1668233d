import Decimal from 'decimal.js';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, setUpMarket, type Market } from '../../helpers/trading';
import { expectOk, openAccount } from '../trading/trading-kit';
import { accountState, decide, expectNoOverdraft, transfer, walletOf, withdraw } from './money-kit';

/**
 * Races against the real service (no interleaving of requests may create or destroy money or
 * overdraw an account). Every request is sent at once; the service
 * does not retry a deadlock or serialization failure, so one would surface here as a 500.
 */
let app: TestApp;
let admin: string;
let market: Market;

async function deposit(login: number, amount: number): Promise<void> {
  expectOk(await app.request('POST', `/api/backoffice/accounts/${login}/deposits`, { token: admin, body: { amount } }), 201);
}

async function liveAccount(customer: LoggedIn, currency = 'USD'): Promise<number> {
  return expectOk(await openAccount(app, admin, customer.id, { kind: 'live', group_id: market.groupId, currency }), 201).login;
}

beforeAll(async () => {
  app = await startTestApp({ label: 'money-races', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  market = await setUpMarket(app, admin);
});
afterAll(() => app?.stop());
afterEach(async () => {
  await expectLedgerBalanced(app);
  await expectNoOverdraft(app);
  expect(app.logs.filter((l) => l.msg === 'unhandled error')).toEqual([]);
});

test('when 200 withdrawals of 10 race against a wallet of 1000, then exactly 100 are accepted and 100 are 422 at amount', async () => {
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  await deposit(wallet, 1000);
  const answers = await Promise.all(Array.from({ length: 200 }, () => withdraw(app, customer, 10)));
  const accepted = answers.filter((r) => r.status === 202);
  const refused = answers.filter((r) => r.status === 422);
  expect(accepted).toHaveLength(100);
  expect(refused).toHaveLength(100);
  for (const r of refused) expect(r.body.detail[0].loc).toEqual(['body', 'amount']);
  expect(new Set(accepted.map((r) => r.body.transaction_id)).size).toBe(100);
  // Every accepted answer saw its own reserve: the max_withdrawable values are 990, 980, ..., 0, once each.
  const remaining = accepted.map((r) => Number(r.body.max_withdrawable)).sort((a, b) => a - b);
  expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => i * 10));
  expect(await accountState(app, wallet)).toMatchObject({ balance: '1000.00', reserved: '1000.00' });

  // Approving all of them at once pays out exactly the wallet.
  const approver = await createStaff(app, ['approve_withdrawals'], admin);
  const decisions = await Promise.all(accepted.map((r) => decide(app, approver.token, r.body.transaction_id, 'approve')));
  expect(decisions.map((r) => r.status)).toEqual(Array(100).fill(200));
  expect(await accountState(app, wallet)).toMatchObject({ balance: '0.00', reserved: '0.00' });
  const [rows] = await sql<{ n: string; total: string }>(
    app,
    `select count(*)::text as n, sum(l.amount)::text as total from ledger_entries l join accounts a on a.id = l.account_id
      where a.login = ? and l.kind = 'withdrawal'`,
    [wallet],
  );
  expect(rows).toEqual({ n: '100', total: '-1000.00' });
});

test('when 100 transfers A to B race 100 transfers B to A, then all 200 complete and no money is made or lost', async () => {
  const customer = await createCustomer(app, admin);
  const a = await walletOf(app, customer);
  const b = await liveAccount(customer);
  await deposit(a, 1000);
  await deposit(b, 1000);
  // Interleaved, so both directions are in flight together from the first request to the last.
  const answers = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      i % 2 === 0 ? transfer(app, customer, a, b, 1.25) : transfer(app, customer, b, a, 0.75),
    ),
  );
  const failed = answers.filter((r) => r.status !== 200);
  expect(failed.map((r) => `${r.status} ${r.text}`)).toEqual([]);
  // 100 x 1.25 one way, 100 x 0.75 the other
  expect((await accountState(app, a)).balance).toBe('950.00');
  expect((await accountState(app, b)).balance).toBe('1050.00');
  const [legs] = await sql<{ n: string; total: string }>(
    app,
    `select count(*)::text as n, sum(l.amount)::text as total from ledger_entries l
      join accounts x on x.id = l.account_id where x.login in (?, ?) and l.reference_type = 'transfer'`,
    [a, b],
  );
  expect(legs).toEqual({ n: '400', total: '0.00' });
});

test('when transfers race both ways between accounts of different currencies, then every pair of legs keeps its recorded rate', async () => {
  const customer = await createCustomer(app, admin);
  const usd = await walletOf(app, customer);
  const eur = await liveAccount(customer, 'EUR');
  await deposit(usd, 5000);
  await deposit(eur, 5000);
  const answers = await Promise.all(
    Array.from({ length: 100 }, (_, i) =>
      i % 2 === 0
        ? transfer(app, customer, usd, eur, Number((10.01 + i).toFixed(2)))
        : transfer(app, customer, eur, usd, Number((7.77 + i).toFixed(2))),
    ),
  );
  expect(answers.filter((r) => r.status !== 200).map((r) => r.text)).toEqual([]);
  const legs = await sql<{ out_amount: string; in_amount: string; amount: string; converted_amount: string }>(
    app,
    `select o.amount::text as out_amount, i.amount::text as in_amount, t.amount::text as amount, t.converted_amount::text as converted_amount
       from transfers t join ledger_entries o on o.id = t.id join ledger_entries i on i.id = t.transfer_in_id
      where t.customer_id = ?`,
    [customer.id],
  );
  expect(legs).toHaveLength(100);
  for (const l of legs) {
    expect(l.out_amount).toBe(new Decimal(l.amount).neg().toFixed(2));
    expect(l.in_amount).toBe(l.converted_amount);
  }
});

test('when a transfer out of a live account races a market order on it, then free margin never goes negative', async () => {
  // Balance 1000; a 0.5-lot EURUSD buy needs 550.10 margin (leverage 100 at ask 1.1002); the
  // transfer asks 600. Either fits alone, not both: exactly one of them goes through.
  for (let round = 0; round < 15; round++) {
    const customer = await createCustomer(app, admin);
    const wallet = await walletOf(app, customer);
    const live = await liveAccount(customer);
    await deposit(live, 1000);
    const [order, moved] = await Promise.all([
      app.request('POST', '/orders', { token: customer.token, body: { login: live, symbol: 'EURUSD', cmd: 0, volume: 0.5 } }),
      transfer(app, customer, live, wallet, 600),
    ]);
    expect([order.status === 201, moved.status === 200].filter(Boolean)).toHaveLength(1);
    if (order.status === 422) expect(order.body.detail[0].loc).toEqual(['body', 'volume']);
    if (moved.status === 422) expect(moved.body.detail[0].loc).toEqual(['body', 'amount']);
    const account = expectOk(await app.request('GET', `/api/crm/accounts/${live}`, { token: admin }), 200);
    expect(new Decimal(account.free_margin).gte(0)).toBe(true);
    expect(new Decimal(account.balance).gte(0)).toBe(true);
  }
});
