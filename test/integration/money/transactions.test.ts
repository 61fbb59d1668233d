import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, setUpMarket } from '../../helpers/trading';
import { expect422, expectError, expectOk, openAccount } from '../trading/trading-kit';
import { decide, transfer, walletOf, withdraw } from './money-kit';

/** GET /customers/me/transactions: the ledger rows of the caller's own accounts, newest booking first. */
let app: TestApp;
let admin: string;
let alice: LoggedIn;
let bob: LoggedIn;
let wallet: number;
let live: number;
let bobWallet: number;

const FIELDS = [
  'amount',
  'balance_after',
  'bucket',
  'comment',
  'created_at',
  'currency',
  'id',
  'kind',
  'login',
  'reference_id',
  'reference_type',
  'seq',
];

beforeAll(async () => {
  app = await startTestApp({ label: 'transactions', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  const market = await setUpMarket(app, admin);
  alice = await createCustomer(app, admin);
  bob = await createCustomer(app, admin);
  wallet = await walletOf(app, alice);
  bobWallet = await walletOf(app, bob);
  live = expectOk(
    await openAccount(app, admin, alice.id, { kind: 'live', group_id: market.groupId, currency: 'EUR' }),
    201,
  ).login;
  for (const [login, amount] of [
    [wallet, 1000],
    [bobWallet, 50],
  ] as const)
    expectOk(await app.request('POST', `/api/backoffice/accounts/${login}/deposits`, { token: admin, body: { amount } }), 201);
  expectOk(await transfer(app, alice, wallet, live, 110.02), 200);
  const approver = await createStaff(app, ['approve_withdrawals'], admin);
  const w = expectOk(await withdraw(app, alice, 100), 202);
  expectOk(await decide(app, approver.token, w.transaction_id, 'approve'), 200);
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

const list = (customer: LoggedIn, query = '') =>
  app.request('GET', `/customers/me/transactions${query}`, { token: customer.token });

test('when a customer reads its transactions, then every row of its accounts comes newest booking first, with login and currency', async () => {
  const page = expectOk(await list(alice), 200);
  expect(page).toMatchObject({ page: 1, page_size: 20, total: 4 });
  expect(Object.keys(page.items[0]).sort()).toEqual(FIELDS);
  expect(page.items.map((r: any) => [r.kind, r.login, r.currency, r.amount])).toEqual([
    ['withdrawal', wallet, 'USD', '-100.00'],
    ['transfer_in', live, 'EUR', '100.00'], // 110.02 / 1.1002
    ['transfer_out', wallet, 'USD', '-110.02'],
    ['deposit', wallet, 'USD', '1000.00'],
  ]);
  const seqs = page.items.map((r: any) => r.seq);
  expect([...seqs].sort((a, b) => b - a)).toEqual(seqs);
  expect(page.items[0].balance_after).toBe('789.98');
});

test('when filtered by one of its logins and paged, then only that account, one page at a time', async () => {
  const first = expectOk(await list(alice, `?login=${wallet}&page_size=2`), 200);
  expect(first).toMatchObject({ total: 3, page: 1, page_size: 2 });
  expect(first.items.map((r: any) => r.kind)).toEqual(['withdrawal', 'transfer_out']);
  const second = expectOk(await list(alice, `?login=${wallet}&page_size=2&page=2`), 200);
  expect(second.items.map((r: any) => r.kind)).toEqual(['deposit']);
  expect(expectOk(await list(alice, `?login=${live}`), 200).items.map((r: any) => r.kind)).toEqual(['transfer_in']);
});

test("when another customer's login or one that does not exist is asked for, then 404 alike; each sees only its own", async () => {
  const theirs = await list(bob, `?login=${wallet}`);
  const missing = await list(bob, '?login=999999999');
  expectError(theirs, 404, 'NOT_FOUND');
  expect(theirs.body).toEqual(missing.body);
  const own = expectOk(await list(bob), 200);
  expect(own.items.map((r: any) => r.login)).toEqual([bobWallet]);
});

test('when the query is out of bounds or staff call it, then 422 at the parameter or 403', async () => {
  expect422(await list(alice, '?page_size=201'), ['query', 'page_size']);
  expect422(await list(alice, '?login=abc'), ['query', 'login']);
  expectError(await app.request('GET', '/customers/me/transactions', { token: admin }), 403, 'FORBIDDEN');
});
