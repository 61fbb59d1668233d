import { randomUUID } from 'node:crypto';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, openOrder, setQuote, setUpMarket, type Market } from '../../helpers/trading';
import { expect422, expectError, expectOk, openAccount, sql } from './trading-kit';

let app: TestApp;
let token: string;
let market: Market;

beforeAll(async () => {
  app = await startTestApp({ label: 'accounts', env: { ROLE: 'api' } });
  token = await adminToken(app);
  market = await setUpMarket(app, token);
});
afterAll(() => app?.stop());
beforeEach(async () => {
  await setQuote(app, token, 'EURUSD', 1.1, 1.1002);
  await setQuote(app, token, 'USDJPY', 150, 150.02);
});
afterEach(() => expectLedgerBalanced(app));

const ACCOUNT_FIELDS = ['login', 'kind', 'currency', 'balance', 'equity', 'margin', 'free_margin', 'group_id'];

describe('wallets', () => {
  test('when a customer is created, then it has exactly one account: a USD wallet with balance 0.00 and no group', async () => {
    const customer = await createCustomer(app, token);
    const staffView = expectOk(await app.request('GET', `/api/crm/customers/${customer.id}/accounts`, { token }), 200);
    expect(staffView.items).toHaveLength(1);
    const wallet = staffView.items[0];
    for (const f of ACCOUNT_FIELDS) expect(wallet).toHaveProperty(f);
    expect(wallet).toMatchObject({
      kind: 'wallet',
      currency: 'USD',
      balance: '0.00',
      equity: '0.00',
      margin: '0.00',
      free_margin: '0.00',
      group_id: null,
    });
    expect(Number.isInteger(wallet.login)).toBe(true);
    const own = expectOk(await app.request('GET', '/customers/me/accounts', { token: customer.token }), 200);
    expect(own.items).toEqual([wallet]);
    const rows = await sql<{ n: string }>(
      app,
      `select count(*)::text as n from accounts where customer_id = ? and kind = 'wallet'`,
      [customer.id],
    );
    expect(rows[0]!.n).toBe('1');
  });

  test('when a second wallet is inserted for a customer directly in the database, then the unique index refuses it', async () => {
    const customer = await createCustomer(app, token);
    await expect(
      sql(
        app,
        `insert into accounts (id, created_at, updated_at, customer_id, kind, currency, balance, reserved)
         values (?, now(), now(), ?, 'wallet', 'USD', 0, 0)`,
        [randomUUID(), customer.id],
      ),
    ).rejects.toThrow(/accounts_one_wallet_per_customer|unique/i);
  });

  test('when staff ask to open a wallet through the accounts route, then it is 422 literal_error at kind and nothing is created', async () => {
    const customer = await createCustomer(app, token);
    const res = await openAccount(app, token, customer.id, { kind: 'wallet', group_id: market.groupId });
    expect422(res, ['body', 'kind'], 'literal_error');
    const list = expectOk(await app.request('GET', `/api/crm/customers/${customer.id}/accounts?page_size=200`, { token }), 200);
    expect(list.items).toHaveLength(1);
  });
});

describe('opening trading accounts', () => {
  test.each(['live', 'demo', 'prop'] as const)(
    'when staff open a %s account in an active group, then it is 201 with an integer login, the group, its currency and zero balance',
    async (kind) => {
      const customer = await createCustomer(app, token);
      const res = await openAccount(app, token, customer.id, { kind, group_id: market.groupId });
      const body = expectOk(res, 201);
      expect(body).toMatchObject({
        kind,
        currency: 'USD',
        balance: '0.00',
        equity: '0.00',
        margin: '0.00',
        free_margin: '0.00',
        group_id: market.groupId,
        customer_id: customer.id,
        leverage: 100,
      });
      expect(Number.isSafeInteger(body.login)).toBe(true);
      expect(body.login).toBeGreaterThan(0);
      const fetched = expectOk(await app.request('GET', `/api/crm/accounts/${body.login}`, { token }), 200);
      expect(fetched).toEqual(body);
    },
  );

  test('when several accounts are opened one after another, then their logins are unique and strictly increasing, wallets included', async () => {
    const logins: number[] = [];
    for (let i = 0; i < 3; i++) {
      const customer = await createCustomer(app, token);
      const wallet = expectOk(await app.request('GET', '/customers/me/accounts', { token: customer.token }), 200).items[0];
      logins.push(wallet.login);
      for (const kind of ['live', 'demo', 'prop']) {
        logins.push(expectOk(await openAccount(app, token, customer.id, { kind, group_id: market.groupId }), 201).login);
      }
    }
    for (let i = 1; i < logins.length; i++) expect(logins[i]!).toBeGreaterThan(logins[i - 1]!);
    expect(new Set(logins).size).toBe(logins.length);
  });

  test('when twenty accounts are opened in parallel, then every login is a distinct integer', async () => {
    const customer = await createCustomer(app, token);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        openAccount(app, token, customer.id, { kind: i % 2 ? 'demo' : 'live', group_id: market.groupId }),
      ),
    );
    const logins = answers.map((r) => expectOk(r, 201).login as number);
    expect(logins.every((l) => Number.isSafeInteger(l))).toBe(true);
    expect(new Set(logins).size).toBe(20);
    const list = expectOk(await app.request('GET', `/api/crm/customers/${customer.id}/accounts?page_size=200`, { token }), 200);
    expect(list.items).toHaveLength(21);
  });

  test('when a customer with 21 accounts lists them, then a page of 20 by login with the total, and the 21st on page 2', async () => {
    const customer = await createCustomer(app, token);
    for (let i = 0; i < 20; i++)
      expectOk(await openAccount(app, token, customer.id, { kind: 'demo', group_id: market.groupId }), 201);
    const first = expectOk(await app.request('GET', '/customers/me/accounts', { token: customer.token }), 200);
    expect(first).toMatchObject({ page: 1, page_size: 20, total: 21 });
    expect(first.items).toHaveLength(20);
    const logins = first.items.map((a: { login: number }) => a.login);
    expect(logins).toEqual([...logins].sort((x, y) => x - y));
    const second = expectOk(await app.request('GET', '/customers/me/accounts?page=2', { token: customer.token }), 200);
    expect(second).toMatchObject({ page: 2, page_size: 20, total: 21 });
    expect(second.items).toHaveLength(1);
    expect(second.items[0].login).toBeGreaterThan(logins.at(-1));
    const staff = expectOk(await app.request('GET', `/api/crm/customers/${customer.id}/accounts`, { token }), 200);
    expect(staff).toMatchObject({ page: 1, page_size: 20, total: 21 });
    expect422(await app.request('GET', '/customers/me/accounts?page_size=201', { token: customer.token }), [
      'query',
      'page_size',
    ]);
  });

  test('when a currency and a leverage are given, then the account uses them instead of the group defaults', async () => {
    const customer = await createCustomer(app, token);
    const body = expectOk(
      await openAccount(app, token, customer.id, { kind: 'live', group_id: market.groupId, currency: 'EUR', leverage: 50 }),
      201,
    );
    expect(body).toMatchObject({ currency: 'EUR', leverage: 50, group_id: market.groupId });
  });

  test('when the group does not exist, then it is 422 at body.group_id', async () => {
    const customer = await createCustomer(app, token);
    expect422(await openAccount(app, token, customer.id, { kind: 'live', group_id: randomUUID() }), ['body', 'group_id']);
  });

  test('when group_id is not a uuid, then it is 422 uuid_parsing at body.group_id', async () => {
    const customer = await createCustomer(app, token);
    expect422(
      await openAccount(app, token, customer.id, { kind: 'live', group_id: 'nope' }),
      ['body', 'group_id'],
      'uuid_parsing',
    );
  });

  test('when the group is inactive, then it is 422 at body.group_id and no account is opened', async () => {
    const customer = await createCustomer(app, token);
    const inactive = expectOk(
      await app.request('POST', '/groups', { token, body: { name: `Inactive-${randomUUID().slice(0, 8)}` } }),
      201,
    );
    expectOk(await app.request('PATCH', `/groups/${inactive.id}`, { token, body: { is_active: false } }), 200);
    expect422(await openAccount(app, token, customer.id, { kind: 'live', group_id: inactive.id }), ['body', 'group_id']);
    const list = expectOk(await app.request('GET', `/api/crm/customers/${customer.id}/accounts?page_size=200`, { token }), 200);
    expect(list.items.map((a: { kind: string }) => a.kind)).toEqual(['wallet']);
  });

  test('when kind is missing or unknown, then it is 422 at body.kind', async () => {
    const customer = await createCustomer(app, token);
    expect422(await openAccount(app, token, customer.id, { group_id: market.groupId }), ['body', 'kind'], 'missing');
    expect422(
      await openAccount(app, token, customer.id, { kind: 'savings', group_id: market.groupId }),
      ['body', 'kind'],
      'literal_error',
    );
  });

  test('when leverage is out of 1..1000 or the currency is not three capitals, then it is 422 at that field', async () => {
    const customer = await createCustomer(app, token);
    expect422(
      await openAccount(app, token, customer.id, { kind: 'live', group_id: market.groupId, leverage: 0 }),
      ['body', 'leverage'],
      'greater_than_equal',
    );
    expect422(
      await openAccount(app, token, customer.id, { kind: 'live', group_id: market.groupId, leverage: 1001 }),
      ['body', 'leverage'],
      'less_than_equal',
    );
    expect422(await openAccount(app, token, customer.id, { kind: 'live', group_id: market.groupId, currency: 'usd' }), [
      'body',
      'currency',
    ]);
  });

  test('when the customer does not exist, then it is 404 NOT_FOUND', async () => {
    expectError(await openAccount(app, token, randomUUID(), { kind: 'live', group_id: market.groupId }), 404, 'NOT_FOUND');
  });

  test('when a customer or a staff user without manage_accounts opens an account, then it is 403', async () => {
    const customer = await createCustomer(app, token);
    const staff = await createStaff(app, ['view_customers'], token);
    expectError(
      await openAccount(app, customer.token, customer.id, { kind: 'live', group_id: market.groupId }),
      403,
      'FORBIDDEN',
    );
    expectError(await openAccount(app, staff.token, customer.id, { kind: 'live', group_id: market.groupId }), 403, 'FORBIDDEN');
  });
});

describe('account view with open orders', () => {
  let customer: LoggedIn;
  beforeAll(async () => {
    customer = await createCustomer(app, token);
  });

  test('when a 1 lot EURUSD buy at 1.1002 moves to 1.101/1.1012, then equity is +80.00, margin 1101.00 and free margin the rest', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 10_000);
    await openOrder(app, token, login, 0, 1, 'EURUSD');
    const atOpen = expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200);
    // At once the buy is worth the bid: (1.1 - 1.1002) * 100000 = -20.00; margin 100000 * 1.1 / 100.
    expect(atOpen).toMatchObject({ balance: '10000.00', equity: '9980.00', margin: '1100.00', free_margin: '8880.00' });
    await setQuote(app, token, 'EURUSD', 1.101, 1.1012);
    const view = expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200);
    expect(view).toMatchObject({
      login,
      kind: 'live',
      currency: 'USD',
      group_id: market.groupId,
      balance: '10000.00',
      equity: '10080.00',
      margin: '1101.00',
      free_margin: '8979.00',
    });
  });

  test('when a sell and a buy are open, then equity sums both floating profits at the closing side of the quote', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 5_000);
    await openOrder(app, token, login, 1, 0.5, 'EURUSD'); // sells at bid 1.1
    await openOrder(app, token, login, 0, 0.2, 'EURUSD'); // buys at ask 1.1002
    await setQuote(app, token, 'EURUSD', 1.095, 1.0952);
    // sell: (1.1 - 1.0952) * 50000 = 240.00; buy: (1.095 - 1.1002) * 20000 = -104.00
    // margin: 50000 * 1.0952 / 100 = 547.60 plus 20000 * 1.095 / 100 = 219.00
    const view = expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200);
    expect(view).toMatchObject({ balance: '5000.00', equity: '5136.00', margin: '766.60', free_margin: '4369.40' });
  });

  test('when a USDJPY sell is in profit, then its JPY profit is converted to USD at the USDJPY mid', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1_000);
    await openOrder(app, token, login, 1, 0.1, 'USDJPY'); // sells at bid 150.000
    await setQuote(app, token, 'USDJPY', 149.5, 149.52);
    // (150 - 149.52) * 10000 = 4800 JPY / 149.51 = 32.1048...
    const view = expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200);
    expect(view.equity).toBe('1032.10');
    expect(Number(view.free_margin)).toBeCloseTo(Number(view.equity) - Number(view.margin), 2);
    // 10000 USD of notional at leverage 100 is about 100 USD of margin.
    expect(Number(view.margin)).toBeGreaterThanOrEqual(99.9);
    expect(Number(view.margin)).toBeLessThanOrEqual(100.1);
  });

  test('when the account leverage is 50, then margin is the notional over 50', async () => {
    const opened = expectOk(
      await openAccount(app, token, customer.id, { kind: 'live', group_id: market.groupId, leverage: 50 }),
      201,
    );
    expectOk(
      await app.request('POST', `/api/backoffice/accounts/${opened.login}/deposits`, { token, body: { amount: 5000 } }),
      201,
    );
    await openOrder(app, token, opened.login, 0, 1, 'EURUSD');
    const view = expectOk(await app.request('GET', `/api/crm/accounts/${opened.login}`, { token }), 200);
    expect(view).toMatchObject({ leverage: 50, margin: '2200.00', equity: '4980.00', free_margin: '2780.00' });
  });

  test('when the symbol of an open order loses its quote, then the order counts at its opening price with no floating profit', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 3_000);
    await openOrder(app, token, login, 0, 1, 'EURUSD');
    expectOk(await app.request('DELETE', '/simulator/quotes/EURUSD', { token }), 204);
    const view = expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200);
    expect(view).toMatchObject({ balance: '3000.00', equity: '3000.00', margin: '1100.20', free_margin: '1899.80' });
  });
});

describe('reading accounts', () => {
  test("when a customer lists its accounts, then it sees its own and none of another customer's", async () => {
    const a = await createCustomer(app, token);
    const b = await createCustomer(app, token);
    const aLive = await fundedAccount(app, token, a.id, market.groupId, 100);
    const bLive = await fundedAccount(app, token, b.id, market.groupId, 200);
    const aList = expectOk(await app.request('GET', '/customers/me/accounts', { token: a.token }), 200).items;
    const bList = expectOk(await app.request('GET', '/customers/me/accounts', { token: b.token }), 200).items;
    expect(aList.map((x: { kind: string }) => x.kind)).toEqual(['wallet', 'live']);
    expect(aList.map((x: { login: number }) => x.login)).toContain(aLive);
    expect(aList.map((x: { login: number }) => x.login)).not.toContain(bLive);
    expect(bList.map((x: { login: number }) => x.login)).toContain(bLive);
    expect(bList.map((x: { login: number }) => x.login)).not.toContain(aLive);
    expect(aList.every((x: { customer_id: string }) => x.customer_id === a.id)).toBe(true);
    expect(aList.find((x: { login: number }) => x.login === aLive)).toMatchObject({ balance: '100.00' });
  });

  test('when staff read /customers/me/accounts, or a customer reads /api/crm/accounts/{login}, then it is 403', async () => {
    const customer = await createCustomer(app, token);
    const login = await fundedAccount(app, token, customer.id, market.groupId, 0);
    expectError(await app.request('GET', '/customers/me/accounts', { token }), 403, 'FORBIDDEN');
    expectError(await app.request('GET', `/api/crm/accounts/${login}`, { token: customer.token }), 403, 'FORBIDDEN');
  });

  test('when the login does not exist, then it is 404; when it is not an integer, then it is 422 at path.login', async () => {
    expectError(await app.request('GET', '/api/crm/accounts/999999999', { token }), 404, 'NOT_FOUND');
    expect422(await app.request('GET', '/api/crm/accounts/abc', { token }), ['path', 'login']);
  });

  test('when nobody is logged in, then reading an account is 401', async () => {
    expectError(await app.request('GET', '/customers/me/accounts'), 401, 'UNAUTHENTICATED');
    expectError(await app.request('GET', '/api/crm/accounts/1'), 401, 'UNAUTHENTICATED');
  });
});
