import { adminToken, createCustomer, createStaff } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, setUpMarket, type Market } from '../../helpers/trading';
import { deposit, expect422, expectError, expectOk, ledgerOf, sql } from './trading-kit';

let app: TestApp;
let token: string;
let market: Market;

beforeAll(async () => {
  app = await startTestApp({ label: 'ledger', env: { ROLE: 'api' } });
  token = await adminToken(app);
  market = await setUpMarket(app, token);
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

async function newAccount(): Promise<{ login: number; customerId: string; customerToken: string }> {
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, market.groupId, 0);
  return { login, customerId: customer.id, customerToken: customer.token };
}

async function balanceOf(login: number): Promise<string> {
  return expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200).balance;
}

describe('deposits', () => {
  test('when staff deposit 100.50 with a comment, then it is 201 with the deposit, the new balance and one ledger row', async () => {
    const { login } = await newAccount();
    const res = await deposit(app, token, login, 100.5, 'bank wire 42');
    const body = expectOk(res, 201);
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      login,
      amount: '100.50',
      currency: 'USD',
      balance: '100.50',
      comment: 'bank wire 42',
      created_at: expect.any(String),
    });
    expect(new Date(body.created_at).toString()).not.toBe('Invalid Date');
    expect(await balanceOf(login)).toBe('100.50');
    expect(await ledgerOf(app, login)).toEqual([
      { kind: 'deposit', amount: '100.50', balance_after: '100.50', reference_type: 'deposit', reference_id: body.id },
    ]);
  });

  test("when a customer's wallet is credited, then the wallet balance grows", async () => {
    const customer = await createCustomer(app, token);
    const wallet = expectOk(await app.request('GET', '/customers/me/accounts', { token: customer.token }), 200).items[0];
    expectOk(await deposit(app, token, wallet.login, 25), 201);
    const after = expectOk(await app.request('GET', '/customers/me/accounts', { token: customer.token }), 200).items[0];
    expect(after.balance).toBe('25.00');
  });

  test('when 0.1 then 0.2 are deposited, then the balance is exactly 0.30 (no binary floating point)', async () => {
    const { login } = await newAccount();
    expectOk(await deposit(app, token, login, 0.1), 201);
    const second = expectOk(await deposit(app, token, login, 0.2), 201);
    expect(second.balance).toBe('0.30');
    expect(await balanceOf(login)).toBe('0.30');
    const rows = await ledgerOf(app, login);
    expect(rows.map((r) => r.amount)).toEqual(['0.10', '0.20']);
    expect(rows.map((r) => r.balance_after)).toEqual(['0.10', '0.30']);
  });

  test('when amounts that binary floats cannot hold are deposited, then each is stored exactly as written', async () => {
    const { login } = await newAccount();
    for (const a of [1.1, 4.35, 0.07, 1.15]) expectOk(await deposit(app, token, login, a), 201);
    const rows = await ledgerOf(app, login);
    expect(rows.map((r) => r.amount)).toEqual(['1.10', '4.35', '0.07', '1.15']);
    expect(await balanceOf(login)).toBe('6.67');
  });

  test('when a large amount is deposited, then it keeps every digit', async () => {
    const { login } = await newAccount();
    expectOk(await deposit(app, token, login, 123456789012.34), 201);
    expectOk(await deposit(app, token, login, 0.01), 201);
    expect(await balanceOf(login)).toBe('123456789012.35');
  });

  test('when the amount has three decimals, then it is 422 decimal_max_places at body.amount and nothing is booked', async () => {
    const { login } = await newAccount();
    expect422(await deposit(app, token, login, 0.001), ['body', 'amount'], 'decimal_max_places');
    expect422(await deposit(app, token, login, 10.005), ['body', 'amount'], 'decimal_max_places');
    expect(await ledgerOf(app, login)).toEqual([]);
    expect(await balanceOf(login)).toBe('0.00');
  });

  test.each([
    [0, 'greater_than'],
    [-5, 'greater_than'],
    [-0.01, 'greater_than'],
    ['abc', 'float_type'],
    ['10', 'float_type'],
    [null, 'float_type'],
    [true, 'float_type'],
    [1e13, 'less_than_equal'],
  ])('when the amount is %p, then it is 422 %s at body.amount', async (amount, type) => {
    const { login } = await newAccount();
    expect422(await deposit(app, token, login, amount), ['body', 'amount'], type);
    expect(await ledgerOf(app, login)).toEqual([]);
  });

  test('when the amount is missing, then it is 422 missing at body.amount', async () => {
    const { login } = await newAccount();
    expect422(
      await app.request('POST', `/api/backoffice/accounts/${login}/deposits`, { token, body: { comment: 'x' } }),
      ['body', 'amount'],
      'missing',
    );
  });

  test('when the comment is longer than 500 characters, then it is 422 string_too_long at body.comment', async () => {
    const { login } = await newAccount();
    expect422(await deposit(app, token, login, 1, 'x'.repeat(501)), ['body', 'comment'], 'string_too_long');
  });

  test('when the body is not JSON, then it is 422 json_invalid', async () => {
    const { login } = await newAccount();
    const res = await app.request('POST', `/api/backoffice/accounts/${login}/deposits`, { token, rawBody: '{"amount": 1' });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].type).toBe('json_invalid');
  });

  test('when the account does not exist, then it is 404', async () => {
    expectError(await deposit(app, token, 987654321, 1), 404, 'NOT_FOUND');
  });

  test('when a customer or a staff user without manage_accounts deposits, then it is 403 and nothing is booked', async () => {
    const { login, customerToken } = await newAccount();
    const viewer = await createStaff(app, ['view_customers'], token);
    expectError(await deposit(app, customerToken, login, 10), 403, 'FORBIDDEN');
    expectError(await deposit(app, viewer.token, login, 10), 403, 'FORBIDDEN');
    expect(await ledgerOf(app, login)).toEqual([]);
  });

  test('when 30 deposits of 1.01 run in parallel, then the balance is exactly 30.30 and each row saw the one before it', async () => {
    const { login } = await newAccount();
    const answers = await Promise.all(Array.from({ length: 30 }, () => deposit(app, token, login, 1.01)));
    for (const a of answers) expectOk(a, 201);
    expect(await balanceOf(login)).toBe('30.30');
    const rows = await ledgerOf(app, login);
    expect(rows).toHaveLength(30);
    // Serialised postings: the balances after are exactly 1.01, 2.02, ..., 30.30, each once.
    const after = rows.map((r) => Math.round(Number(r.balance_after) * 100)).sort((x, y) => x - y);
    expect(after).toEqual(Array.from({ length: 30 }, (_, i) => 101 * (i + 1)));
    const balances = answers.map((a) => Math.round(Number(a.body.balance) * 100)).sort((x, y) => x - y);
    expect(balances).toEqual(after);
  });

  test('when deposits race, then seq numbers the rows in booking order and balance_after chains from row to row', async () => {
    const { login } = await newAccount();
    const amounts = Array.from({ length: 25 }, (_, i) => (100 + i) / 100);
    for (const a of await Promise.all(amounts.map((amount) => deposit(app, token, login, amount)))) expectOk(a, 201);
    // The statement, oldest booking first: each row's balance_after is the previous one plus its amount.
    const page = expectOk(await app.request('GET', `/api/backoffice/accounts/${login}/ledger?page_size=200`, { token }), 200);
    const rows = [...page.items].reverse() as Array<{ seq: number; amount: string; balance_after: string }>;
    expect(rows).toHaveLength(25);
    let balance = 0;
    let seq = 0;
    for (const row of rows) {
      expect(row.seq).toBeGreaterThan(seq);
      seq = row.seq;
      balance = Math.round((balance + Number(row.amount)) * 100) / 100;
      expect(Number(row.balance_after)).toBe(balance);
    }
    expect(await balanceOf(login)).toBe(rows.at(-1)!.balance_after);
  });

  test('when deposits to two accounts interleave in parallel, then each balance is the sum of its own rows', async () => {
    const a = await newAccount();
    const b = await newAccount();
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => deposit(app, token, i % 2 ? a.login : b.login, i % 2 ? 2.5 : 0.33)).map(async (p) =>
        expectOk(await p, 201),
      ),
    );
    expect(await balanceOf(a.login)).toBe('25.00');
    expect(await balanceOf(b.login)).toBe('3.30');
  });
});

describe('the ledger is append-only', () => {
  test('when an UPDATE of a ledger row is tried in SQL, then the database refuses it and the row is unchanged', async () => {
    const { login } = await newAccount();
    expectOk(await deposit(app, token, login, 50), 201);
    await expect(
      sql(
        app,
        `update ledger_entries set amount = amount + 1000
          where account_id = (select id from accounts where login = ?)`,
        [login],
      ),
    ).rejects.toThrow(/append-only/);
    await expect(
      sql(app, `update ledger_entries set comment = 'edited' where account_id = (select id from accounts where login = ?)`, [
        login,
      ]),
    ).rejects.toThrow(/append-only/);
    expect((await ledgerOf(app, login)).map((r) => r.amount)).toEqual(['50.00']);
  });

  test('when a DELETE of a ledger row is tried in SQL, then the database refuses it and the row stays', async () => {
    const { login } = await newAccount();
    expectOk(await deposit(app, token, login, 75), 201);
    await expect(
      sql(app, `delete from ledger_entries where account_id = (select id from accounts where login = ?)`, [login]),
    ).rejects.toThrow(/append-only/);
    expect(await ledgerOf(app, login)).toHaveLength(1);
    expect(await balanceOf(login)).toBe('75.00');
  });
});

describe('GET /api/backoffice/accounts/{login}/ledger', () => {
  test('when an account has deposits, then the ledger lists them newest first with amount, balance after and reference', async () => {
    const { login } = await newAccount();
    const ids: string[] = [];
    for (const [amount, comment] of [
      [10, 'first'],
      [20.25, 'second'],
      [0.75, 'third'],
    ] as const)
      ids.push(expectOk(await deposit(app, token, login, amount, comment), 201).id);
    const page = expectOk(await app.request('GET', `/api/backoffice/accounts/${login}/ledger`, { token }), 200);
    expect(page).toMatchObject({ page: 1, total: 3 });
    expect(page.items.map((i: { amount: string }) => i.amount)).toEqual(['0.75', '20.25', '10.00']);
    expect(page.items.map((i: { balance_after: string }) => i.balance_after)).toEqual(['31.00', '30.25', '10.00']);
    expect(page.items.map((i: { comment: string }) => i.comment)).toEqual(['third', 'second', 'first']);
    expect(page.items.map((i: { reference_id: string }) => i.reference_id)).toEqual([...ids].reverse());
    for (const item of page.items) {
      expect(item).toMatchObject({ kind: 'deposit', reference_type: 'deposit' });
      expect(item.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(typeof item.created_at).toBe('string');
    }
  });

  test('when page_size is 2, then the pages split the rows without overlap', async () => {
    const { login } = await newAccount();
    for (const amount of [1, 2, 3, 4, 5]) expectOk(await deposit(app, token, login, amount), 201);
    const p1 = expectOk(await app.request('GET', `/api/backoffice/accounts/${login}/ledger?page_size=2`, { token }), 200);
    const p3 = expectOk(await app.request('GET', `/api/backoffice/accounts/${login}/ledger?page_size=2&page=3`, { token }), 200);
    expect(p1.total).toBe(5);
    expect(p1.items.map((i: { amount: string }) => i.amount)).toEqual(['5.00', '4.00']);
    expect(p3.items.map((i: { amount: string }) => i.amount)).toEqual(['1.00']);
  });

  test('when the ledger of an unknown login is asked for, then it is 404; for a customer token, then 403', async () => {
    const { login, customerToken } = await newAccount();
    expectError(await app.request('GET', '/api/backoffice/accounts/99999999/ledger', { token }), 404, 'NOT_FOUND');
    expectError(await app.request('GET', `/api/backoffice/accounts/${login}/ledger`, { token: customerToken }), 403, 'FORBIDDEN');
  });
});
