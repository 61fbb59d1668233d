import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, openOrder, setUpMarket } from '../../helpers/trading';
import { installPostingHooks, type Posting, type PostingHook } from '../../../src/domain/ledger/posting';
import { AppError, errors } from '../../../src/platform/errors';
import { POSTING_HOOKS } from '../../../src/policy';
import { deposit, expectError, expectOk, ledgerOf } from '../trading/trading-kit';
import { accountState, transfer, walletOf, withdraw } from './money-kit';

/**
 * The posting path's hooks, seen from the routes: the shipped negative-wallet rule refuses
 * money leaving a wallet below zero, and hooks a test installs beside the shipped ones run in
 * the movement's own transaction (a refusal writes nothing, a failure after the booking rolls
 * it back, and what a hook reads includes the booking it follows).
 */
let app: TestApp;
let admin: string;
let groupId: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'posting_hooks', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  groupId = (await setUpMarket(app, admin)).groupId;
});
afterAll(() => app?.stop());
afterEach(async () => {
  installPostingHooks(POSTING_HOOKS);
  await expectLedgerBalanced(app);
});

async function customerWithWallet(amount: number): Promise<{ customer: LoggedIn; wallet: number }> {
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  if (amount > 0) expectOk(await deposit(app, admin, wallet, amount), 201);
  return { customer, wallet };
}

/** A charge-back as the ledger books it: the balance and its row change together. */
async function bookDebt(login: number, amount: string): Promise<void> {
  await sql(
    app,
    `with a as (update accounts set balance = balance - ?::numeric where login = ? returning id, balance)
     insert into ledger_entries (id, created_at, updated_at, account_id, kind, amount, balance_after, reference_type, reference_id, comment)
     select gen_random_uuid(), now(), now(), a.id, 'adjustment', -?::numeric, a.balance, 'test', 'debt', 'test debt' from a`,
    [amount, login, amount],
  );
}

describe('a wallet below zero', () => {
  test('when money would leave it by withdrawal or transfer, then 409 ACCOUNT_NEGATIVE and nothing is written', async () => {
    const { customer, wallet } = await customerWithWallet(100);
    const live = await fundedAccount(app, admin, customer.id, groupId, 500);
    await bookDebt(wallet, '150.00');
    const before = await ledgerOf(app, wallet);

    expectError(await withdraw(app, customer, 10), 409, 'ACCOUNT_NEGATIVE');
    expectError(await transfer(app, customer, wallet, live, 10), 409, 'ACCOUNT_NEGATIVE');

    expect(await accountState(app, wallet)).toMatchObject({ balance: '-50.00', reserved: '0.00' });
    expect(await ledgerOf(app, wallet)).toEqual(before);
    const [pending] = await sql<{ n: number }>(app, 'select count(*)::int as n from withdrawals where login = ?', [wallet]);
    expect(pending!.n).toBe(0);
  });

  test('when money comes in from a trading account, then it lands, and once the wallet is back above zero money may leave', async () => {
    const { customer, wallet } = await customerWithWallet(100);
    const live = await fundedAccount(app, admin, customer.id, groupId, 500);
    await bookDebt(wallet, '150.00');

    expectOk(await transfer(app, customer, live, wallet, 80), 200);
    expect((await accountState(app, wallet)).balance).toBe('30.00');
    expectOk(await transfer(app, customer, wallet, live, 10), 200);
    expectOk(await withdraw(app, customer, 10), 202);
  });
});

describe('a hook installed beside the shipped ones', () => {
  test('when a before hook refuses a transfer out, then its error is the answer and neither balance moves', async () => {
    const { customer, wallet } = await customerWithWallet(100);
    const live = await fundedAccount(app, admin, customer.id, groupId, 0);
    const seen: Posting[] = [];
    installPostingHooks([
      ...POSTING_HOOKS,
      {
        name: 'test_refusal',
        flows: ['transfer_out'],
        async before(_run, posting) {
          seen.push(posting);
          throw errors.conflict('TEST_REFUSED', 'refused by a test hook');
        },
      },
    ]);
    expectError(await transfer(app, customer, wallet, live, 25), 409, 'TEST_REFUSED');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      flow: 'transfer_out',
      amount: '-25.00',
      account: { login: String(wallet), kind: 'wallet', customerId: customer.id, balance: '100.00', reserved: '0.00' },
      reference: { type: 'transfer' },
    });
    expect((await accountState(app, wallet)).balance).toBe('100.00');
    expect((await accountState(app, live)).balance).toBe('0.00');
  });

  test('when an after hook fails on a deposit, then the deposit rolls back with it', async () => {
    const { wallet } = await customerWithWallet(0);
    installPostingHooks([
      ...POSTING_HOOKS,
      {
        name: 'test_failure',
        flows: ['deposit'],
        async after() {
          throw errors.conflict('TEST_AFTER', 'failed after the booking');
        },
      },
    ]);
    expectError(await deposit(app, admin, wallet, 40), 409, 'TEST_AFTER');
    expect((await accountState(app, wallet)).balance).toBe('0.00');
    expect(await ledgerOf(app, wallet)).toEqual([]);
  });

  test('when an order closes, then the after hook reads the booked balance in the close transaction and sees the whole posting', async () => {
    const customer = await createCustomer(app, admin);
    const live = await fundedAccount(app, admin, customer.id, groupId, 1000);
    const ticket = await openOrder(app, admin, live);
    const seen: Array<{ posting: Posting; balance: string }> = [];
    const hook: PostingHook = {
      name: 'test_close_reader',
      flows: ['order_close'],
      async after(run, posting) {
        const [row] = await run<{ balance: string }>({
          sql: 'select balance::text as balance from accounts where id = ?',
          values: [posting.account.id],
        });
        seen.push({ posting, balance: row!.balance });
      },
    };
    installPostingHooks([...POSTING_HOOKS, hook]);
    expectOk(await app.request('POST', `/orders/${ticket}/close`, { token: admin }), 200);
    const after = await accountState(app, live);
    expect(seen).toHaveLength(1);
    const { posting, balance } = seen[0]!;
    expect(balance).toBe(after.balance);
    expect(posting).toMatchObject({ flow: 'order_close', reference: { type: 'order', id: String(ticket) } });
    expect(posting.account).toMatchObject({ login: String(live), kind: 'live', currency: 'USD', customerId: customer.id });
    // The hook sees the account as the close found it and the amount the close booked.
    const booked = (await ledgerOf(app, live)).filter((r) => r.reference_id === String(ticket));
    const closeRows = booked.slice(booked.findIndex((r) => r.kind === 'trade_profit'));
    expect(closeRows.length).toBeGreaterThan(0);
    expect(posting.amount).toBe(closeRows.reduce((total, r) => total + Number(r.amount), 0).toFixed(2));
    expect(Number(posting.account.balance) + Number(posting.amount)).toBeCloseTo(Number(after.balance), 2);
  });

  test('when a before hook refuses an open, then the order is refused with its error and nothing is booked', async () => {
    const customer = await createCustomer(app, admin);
    const live = await fundedAccount(app, admin, customer.id, groupId, 1000);
    installPostingHooks([
      ...POSTING_HOOKS,
      {
        name: 'test_no_opens',
        flows: ['order_open'],
        async before() {
          throw new AppError(403, 'ACCESS_RESTRICTED', 'no new orders');
        },
      },
    ]);
    const res = await app.request('POST', '/orders', {
      token: admin,
      body: { login: live, symbol: 'EURUSD', cmd: 0, volume: 0.01 },
    });
    expectError(res, 403, 'ACCESS_RESTRICTED');
    const [orders] = await sql<{ n: number }>(app, 'select count(*)::int as n from orders where login = ?', [live]);
    expect(orders!.n).toBe(0);
    expect((await accountState(app, live)).balance).toBe('1000.00');
  });
});
