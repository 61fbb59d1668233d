import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, openOrder, setQuote, setUpMarket, type Market } from '../../helpers/trading';
import { deposit, expect422, expectError, expectOk, ledgerOf, ledgerRowsForTicket, openAccount, uniqueName } from './trading-kit';

let app: TestApp;
let token: string;
let market: Market;
let customer: LoggedIn;

beforeAll(async () => {
  app = await startTestApp({ label: 'mktorders', env: { ROLE: 'api' } });
  token = await adminToken(app);
  market = await setUpMarket(app, token);
  customer = await createCustomer(app, token);
  // An instrument that exists but has never been quoted.
  expectOk(
    await app.request('POST', '/api/platform/instruments', {
      token,
      body: { symbol: 'GBPUSD', digits: 5, contract_size: 100000, base_currency: 'GBP', quote_currency: 'USD' },
    }),
    201,
  );
});
afterAll(() => app?.stop());
beforeEach(async () => {
  await setQuote(app, token, 'EURUSD', 1.1, 1.1002);
  await setQuote(app, token, 'USDJPY', 150, 150.02);
});
afterEach(() => expectLedgerBalanced(app));

const order = (body: Record<string, unknown>, as = token) => app.request('POST', '/orders', { token: as, body });
const close = (ticket: number, as = token) => app.request('POST', `/orders/${ticket}/close`, { token: as });

async function groupWithRow(row: { enabled: boolean; spread: number }, symbol = 'EURUSD'): Promise<string> {
  const group = expectOk(await app.request('POST', '/groups', { token, body: { name: uniqueName('G') } }), 201);
  const put = await app.request('PUT', `/groups/${group.id}/instruments/${symbol}`, {
    token,
    body: { ...row, swap_long: 0, swap_short: 0 },
  });
  expect([200, 201]).toContain(put.status);
  return group.id;
}

describe('opening', () => {
  test('when a buy is opened, then it is 201 at the ask with every order field', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId);
    const res = await order({ login, symbol: 'EURUSD', cmd: 0, volume: 0.5, sl: 1.09, tp: 1.12, comment: 'hello' });
    const body = expectOk(res, 201);
    expect(body).toEqual({
      order: expect.any(Number),
      login,
      symbol: 'EURUSD',
      cmd: 0,
      volume: 0.5,
      open_price: 1.1002,
      sl: 1.09,
      tp: 1.12,
      comment: 'hello',
      status: 'open',
      opened_at: expect.any(String),
      closed_at: null,
      close_price: null,
      profit: null,
      close_reason: null,
      trailing_stop: null,
      commission: '0.00',
      swap: '0.00',
    });
    expect(Number.isSafeInteger(body.order)).toBe(true);
  });

  test('when a sell is opened, then it opens at the bid', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId);
    const body = expectOk(await order({ login, symbol: 'EURUSD', cmd: 1, volume: 0.1 }), 201);
    expect(body).toMatchObject({ cmd: 1, open_price: 1.1, sl: null, tp: null, comment: null });
  });

  test('when the group has a 2 point spread on a 5-digit symbol, then a buy opens 0.00001 above the ask and a sell 0.00001 below the bid', async () => {
    const groupId = await groupWithRow({ enabled: true, spread: 2 });
    const login = await fundedAccount(app, token, customer.id, groupId);
    expect(expectOk(await order({ login, symbol: 'EURUSD', cmd: 0, volume: 0.1 }), 201).open_price).toBe(1.10021);
    expect(expectOk(await order({ login, symbol: 'EURUSD', cmd: 1, volume: 0.1 }), 201).open_price).toBe(1.09999);
  });

  test('when the group has a 10 point spread on a 3-digit symbol, then each side widens by 0.005', async () => {
    const groupId = await groupWithRow({ enabled: true, spread: 10 }, 'USDJPY');
    const login = await fundedAccount(app, token, customer.id, groupId);
    expect(expectOk(await order({ login, symbol: 'USDJPY', cmd: 0, volume: 0.1 }), 201).open_price).toBe(150.025);
    expect(expectOk(await order({ login, symbol: 'USDJPY', cmd: 1, volume: 0.1 }), 201).open_price).toBe(149.995);
  });

  test('when a spread group closes a buy, then it closes at the bid minus half the spread', async () => {
    const groupId = await groupWithRow({ enabled: true, spread: 2 });
    const login = await fundedAccount(app, token, customer.id, groupId);
    const ticket = await openOrder(app, token, login, 0, 1, 'EURUSD'); // at 1.10021
    await setQuote(app, token, 'EURUSD', 1.102, 1.1022);
    const closed = expectOk(await close(ticket), 200);
    // closes at 1.102 - 0.00001 = 1.10199; (1.10199 - 1.10021) * 100000 = 178.00
    expect(closed).toMatchObject({ close_price: 1.10199, profit: '178.00' });
  });

  test('when the group row of the symbol is disabled, then opening is 422 at body.symbol', async () => {
    const groupId = await groupWithRow({ enabled: false, spread: 0 });
    const login = await fundedAccount(app, token, customer.id, groupId);
    expect422(await order({ login, symbol: 'EURUSD', cmd: 0, volume: 0.1 }), ['body', 'symbol']);
    expectOk(await order({ login, symbol: 'USDJPY', cmd: 0, volume: 0.1 }), 201);
  });

  test('when the symbol is unknown or has no quote, then it is 422 at body.symbol', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId);
    expect422(await order({ login, symbol: 'XXXYYY', cmd: 0, volume: 0.1 }), ['body', 'symbol']);
    expect422(await order({ login, symbol: 'GBPUSD', cmd: 0, volume: 0.1 }), ['body', 'symbol']);
    expectOk(await app.request('DELETE', '/simulator/quotes/EURUSD', { token }), 204);
    expect422(await order({ login, symbol: 'EURUSD', cmd: 1, volume: 0.1 }), ['body', 'symbol']);
    const list = expectOk(await app.request('GET', `/orders?login=${login}`, { token }), 200);
    expect(list.items).toEqual([]);
  });

  test('when an account with 100 USD tries 1 lot, then it is 422 at body.volume and nothing opens', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 100);
    expect422(await order({ login, symbol: 'EURUSD', cmd: 0, volume: 1 }), ['body', 'volume']);
    expect(expectOk(await app.request('GET', `/orders?login=${login}`, { token }), 200).items).toEqual([]);
  });

  test('when open orders use up the free margin, then the next order is 422 at body.volume', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 100);
    // needs 9000 * 1.1002 / 100 = 99.02
    expectOk(await order({ login, symbol: 'EURUSD', cmd: 0, volume: 0.09 }), 201);
    expect422(await order({ login, symbol: 'EURUSD', cmd: 0, volume: 0.01 }), ['body', 'volume']);
  });

  test('when the free margin covers the order exactly, then it opens', async () => {
    // 0.1 lot at 1.1002 with leverage 100 needs exactly 110.02.
    const login = await fundedAccount(app, token, customer.id, market.groupId, 110.02);
    expectOk(await order({ login, symbol: 'EURUSD', cmd: 0, volume: 0.1 }), 201);
  });

  test('when the free margin is one cent short, then it is 422 at body.volume', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 110.01);
    expect422(await order({ login, symbol: 'EURUSD', cmd: 0, volume: 0.1 }), ['body', 'volume']);
  });

  test.each([
    [0, 'greater_than'],
    [-1, 'greater_than'],
    [0.001, 'decimal_max_places'],
    [0.015, 'decimal_max_places'],
    [1000.01, 'less_than_equal'],
    ['1', 'float_type'],
  ])('when volume is %p, then it is 422 %s at body.volume', async (volume, type) => {
    const login = await fundedAccount(app, token, customer.id, market.groupId);
    expect422(await order({ login, symbol: 'EURUSD', cmd: 0, volume }), ['body', 'volume'], type);
  });

  test('when volume, cmd, symbol or login is missing, then it is 422 missing at that field', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId);
    expect422(await order({ login, symbol: 'EURUSD', cmd: 0 }), ['body', 'volume'], 'missing');
    expect422(await order({ login, symbol: 'EURUSD', volume: 1 }), ['body', 'cmd'], 'missing');
    expect422(await order({ login, cmd: 0, volume: 1 }), ['body', 'symbol'], 'missing');
    expect422(await order({ symbol: 'EURUSD', cmd: 0, volume: 1 }), ['body', 'login'], 'missing');
  });

  test.each([2, 7, -1, '0'])('when cmd is %p, then it is 422 literal_error at body.cmd', async (cmd) => {
    const login = await fundedAccount(app, token, customer.id, market.groupId);
    expect422(await order({ login, symbol: 'EURUSD', cmd, volume: 0.1 }), ['body', 'cmd'], 'literal_error');
  });

  test.each([
    ['buy at 1.1002', 'sl 1.1002', 0, { sl: 1.1002 }, 'sl'],
    ['buy at 1.1002', 'sl 1.2', 0, { sl: 1.2 }, 'sl'],
    ['buy at 1.1002', 'tp 1.1002', 0, { tp: 1.1002 }, 'tp'],
    ['buy at 1.1002', 'tp 1.05', 0, { tp: 1.05 }, 'tp'],
    ['sell at 1.1', 'sl 1.1', 1, { sl: 1.1 }, 'sl'],
    ['sell at 1.1', 'sl 1.05', 1, { sl: 1.05 }, 'sl'],
    ['sell at 1.1', 'tp 1.1', 1, { tp: 1.1 }, 'tp'],
    ['sell at 1.1', 'tp 1.2', 1, { tp: 1.2 }, 'tp'],
  ] as const)('when a %s has %s, then it is 422 at that field', async (_side, _what, cmd, stops, field) => {
    const login = await fundedAccount(app, token, customer.id, market.groupId);
    expect422(await order({ login, symbol: 'EURUSD', cmd, volume: 0.1, ...stops }), ['body', field]);
  });

  test('when a sell has tp below and sl above its price, then it opens with both', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId);
    const body = expectOk(await order({ login, symbol: 'EURUSD', cmd: 1, volume: 0.1, sl: 1.11, tp: 1.09 }), 201);
    expect(body).toMatchObject({ sl: 1.11, tp: 1.09 });
  });

  test("when the login is the customer's wallet, then it is 422 at body.login and nothing opens", async () => {
    const c = await createCustomer(app, token);
    const wallet = expectOk(await app.request('GET', '/customers/me/accounts', { token: c.token }), 200).items[0];
    expectOk(await deposit(app, token, wallet.login, 100_000), 201);
    expect422(await order({ login: wallet.login, symbol: 'EURUSD', cmd: 0, volume: 0.1 }), ['body', 'login']);
    expect422(await order({ login: wallet.login, symbol: 'EURUSD', cmd: 0, volume: 0.1 }, c.token), ['body', 'login']);
    expect(expectOk(await app.request('GET', `/orders?login=${wallet.login}`, { token }), 200).items).toEqual([]);
  });

  test('when a USDJPY position has lost its quote, then its margin still counts and an order that does not fit is refused', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    await openOrder(app, token, login, 0, 0.5, 'USDJPY'); // at 150.02
    expectOk(await app.request('DELETE', '/simulator/quotes/USDJPY', { token }), 204);
    // At its opening price: 50000 * 150.02 / 100 = 75010 JPY, at 150.02 JPY per USD = 500.00 USD.
    const view = expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200);
    expect(view).toMatchObject({ balance: '1000.00', equity: '1000.00', margin: '500.00', free_margin: '500.00' });
    // 0.8 lot EURUSD needs 880.16 of the 500.00 free.
    expect422(await order({ login, symbol: 'EURUSD', cmd: 0, volume: 0.8 }), ['body', 'volume']);
    expectOk(await order({ login, symbol: 'EURUSD', cmd: 0, volume: 0.4 }), 201);
  });

  test('when the login is unknown, then it is 404', async () => {
    expectError(await order({ login: 88888888, symbol: 'EURUSD', cmd: 0, volume: 0.1 }), 404, 'NOT_FOUND');
  });

  test("when a customer opens on its own account, then it is 201; on another customer's, then 404", async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId);
    const other = await createCustomer(app, token);
    const otherLogin = await fundedAccount(app, token, other.id, market.groupId);
    expectOk(await order({ login, symbol: 'EURUSD', cmd: 0, volume: 0.1 }, customer.token), 201);
    expectError(await order({ login: otherLogin, symbol: 'EURUSD', cmd: 0, volume: 0.1 }, customer.token), 404, 'NOT_FOUND');
    expect(expectOk(await app.request('GET', `/orders?login=${otherLogin}`, { token }), 200).items).toEqual([]);
  });

  test('when a staff user without open_position opens an order, then it is 403', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId);
    const staff = await createStaff(app, ['close_position', 'view_orders'], token);
    expectError(await order({ login, symbol: 'EURUSD', cmd: 0, volume: 0.1 }, staff.token), 403, 'FORBIDDEN');
  });
});

describe('free margin under concurrency', () => {
  test('when two orders that together exceed the free margin race, then exactly one opens', async () => {
    for (let round = 0; round < 5; round++) {
      // 1000 USD; each 0.5 lot needs 550.10.
      const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
      const answers = await Promise.all([
        order({ login, symbol: 'EURUSD', cmd: 0, volume: 0.5 }),
        order({ login, symbol: 'EURUSD', cmd: 1, volume: 0.5 }),
      ]);
      expect(answers.map((a) => a.status).sort()).toEqual([201, 422]);
      expect422(
        answers.find((a) => a.status === 422)!,
        ['body', 'volume'],
      );
      expect(expectOk(await app.request('GET', `/orders?login=${login}`, { token }), 200).items).toHaveLength(1);
    }
  });

  test('when ten 0.1 lot orders race on 500 USD, then exactly the four that fit open', async () => {
    // Each needs 110.02 and costs 2.00 of spread at once: free margin after k orders is 500 - 112k.
    const login = await fundedAccount(app, token, customer.id, market.groupId, 500);
    const answers = await Promise.all(Array.from({ length: 10 }, () => order({ login, symbol: 'EURUSD', cmd: 0, volume: 0.1 })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(4);
    expect(answers.filter((a) => a.status === 422)).toHaveLength(6);
    const view = expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200);
    expect(view).toMatchObject({ equity: '492.00', margin: '440.00', free_margin: '52.00' });
  });
});

describe('closing', () => {
  test('when a buy is closed in profit, then it is 200 with close price, profit, reason, and one ledger row books the profit', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 2000);
    const ticket = await openOrder(app, token, login, 0, 1, 'EURUSD');
    await setQuote(app, token, 'EURUSD', 1.101, 1.1012);
    const res = await close(ticket, customer.token);
    const body = expectOk(res, 200);
    expect(body).toMatchObject({
      order: ticket,
      status: 'closed',
      close_price: 1.101,
      profit: '80.00',
      close_reason: 'manual',
      closed_at: expect.any(String),
    });
    const rows = await ledgerOf(app, login);
    expect(rows[rows.length - 1]).toEqual({
      kind: 'trade_profit',
      amount: '80.00',
      balance_after: '2080.00',
      reference_type: 'order',
      reference_id: String(ticket),
    });
    const view = expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200);
    expect(view).toMatchObject({ balance: '2080.00', equity: '2080.00', margin: '0.00', free_margin: '2080.00' });
  });

  test('when a sell is closed at a loss, then the loss is booked as a negative amount at the ask', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    const ticket = await openOrder(app, token, login, 1, 0.3, 'EURUSD'); // at 1.1
    await setQuote(app, token, 'EURUSD', 1.1031, 1.1033);
    const body = expectOk(await close(ticket), 200);
    // (1.1 - 1.1033) * 30000 = -99.00
    expect(body).toMatchObject({ close_price: 1.1033, profit: '-99.00' });
    expect(expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200).balance).toBe('901.00');
  });

  test('when a USDJPY buy closes, then the JPY profit is divided by the USDJPY mid and rounded to cents', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    const ticket = await openOrder(app, token, login, 0, 0.1, 'USDJPY'); // at 150.02
    await setQuote(app, token, 'USDJPY', 151, 151.02);
    // (151.00 - 150.02) * 10000 = 9800 JPY; / 151.01 = 64.8963...
    expect(expectOk(await close(ticket), 200).profit).toBe('64.90');
  });

  test('when the converted profit ends in exactly half a cent, then it rounds half to even', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    await setQuote(app, token, 'USDJPY', 199.787, 199.789);
    const up = await openOrder(app, token, login, 0, 0.01, 'USDJPY'); // buys at 199.789
    const down = await openOrder(app, token, login, 1, 0.01, 'USDJPY'); // sells at 199.787
    await setQuote(app, token, 'USDJPY', 199.985, 199.987);
    const small = await openOrder(app, token, login, 0, 0.01, 'USDJPY'); // buys at 199.987
    // Mid 200.000: every JPY amount divides exactly.
    await setQuote(app, token, 'USDJPY', 199.99, 200.01);
    // (199.990 - 199.789) * 1000 = 201 JPY = 1.005 USD -> 1.00 (half-up would give 1.01)
    expect(expectOk(await close(up), 200).profit).toBe('1.00');
    // (199.787 - 200.010) * 1000 = -223 JPY = -1.115 USD -> -1.12
    expect(expectOk(await close(down), 200).profit).toBe('-1.12');
    // (199.990 - 199.987) * 1000 = 3 JPY = 0.015 USD -> 0.02
    expect(expectOk(await close(small), 200).profit).toBe('0.02');
    expect(expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200).balance).toBe('999.90');
  });

  test('when a EUR account closes a EURUSD buy, then the USD profit is converted into EUR', async () => {
    const opened = expectOk(
      await openAccount(app, token, customer.id, { kind: 'live', group_id: market.groupId, currency: 'EUR' }),
      201,
    );
    expectOk(await deposit(app, token, opened.login, 1000), 201);
    const ticket = await openOrder(app, token, opened.login, 0, 0.1, 'EURUSD'); // at 1.1002
    await setQuote(app, token, 'EURUSD', 1.1102, 1.1104);
    // (1.1102 - 1.1002) * 10000 = 100 USD; / 1.1103 = 90.0657... EUR
    expect(expectOk(await close(ticket), 200).profit).toBe('90.07');
    expect(expectOk(await app.request('GET', `/api/crm/accounts/${opened.login}`, { token }), 200).balance).toBe('1090.07');
  });

  test('when an order is closed twice, then the second is 409 ORDER_NOT_OPEN and books nothing', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    const ticket = await openOrder(app, token, login, 0, 0.1);
    expectOk(await close(ticket), 200);
    expectError(await close(ticket), 409, 'ORDER_NOT_OPEN');
    expect(await ledgerRowsForTicket(app, ticket)).toBe(1);
  });

  test('when one order is closed by five parallel requests, then exactly one succeeds and one ledger row is booked', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    const ticket = await openOrder(app, token, login, 0, 0.1);
    const answers = await Promise.all(Array.from({ length: 5 }, () => close(ticket)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409]);
    expect(await ledgerRowsForTicket(app, ticket)).toBe(1);
  });

  test('when the symbol has no quote, then closing is 409 PRICE_UNAVAILABLE and the order stays open', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    const ticket = await openOrder(app, token, login, 0, 0.1);
    expectOk(await app.request('DELETE', '/simulator/quotes/EURUSD', { token }), 204);
    expectError(await close(ticket), 409, 'PRICE_UNAVAILABLE');
    const list = expectOk(await app.request('GET', `/orders?login=${login}&status=open`, { token }), 200);
    expect(list.items.map((o: { order: number }) => o.order)).toEqual([ticket]);
    expect(await ledgerRowsForTicket(app, ticket)).toBe(0);
  });

  test("when the ticket is unknown or another customer's, then closing is 404", async () => {
    const other = await createCustomer(app, token);
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    const ticket = await openOrder(app, token, login, 0, 0.1);
    expectError(await close(99999999), 404, 'NOT_FOUND');
    expectError(await close(ticket, other.token), 404, 'NOT_FOUND');
    expect(await ledgerRowsForTicket(app, ticket)).toBe(0);
  });

  test('when a staff user without close_position closes, then it is 403', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    const ticket = await openOrder(app, token, login, 0, 0.1);
    const staff = await createStaff(app, ['open_position'], token);
    expectError(await close(ticket, staff.token), 403, 'FORBIDDEN');
  });
});

describe('GET /orders', () => {
  test('when an account has open and closed orders, then status filters them and the list is newest first', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 5000);
    const t1 = await openOrder(app, token, login, 0, 0.1);
    const t2 = await openOrder(app, token, login, 1, 0.2);
    const t3 = await openOrder(app, token, login, 0, 0.3, 'USDJPY');
    expectOk(await close(t2), 200);
    const all = expectOk(await app.request('GET', `/orders?login=${login}`, { token }), 200).items;
    expect(all.map((o: { order: number }) => o.order)).toEqual([t3, t2, t1]);
    const open = expectOk(await app.request('GET', `/orders?login=${login}&status=open`, { token }), 200).items;
    expect(open.map((o: { order: number }) => o.order)).toEqual([t3, t1]);
    const closed = expectOk(await app.request('GET', `/orders?login=${login}&status=closed`, { token }), 200).items;
    expect(closed.map((o: { order: number }) => o.order)).toEqual([t2]);
    expect(closed[0]).toMatchObject({ status: 'closed', close_reason: 'manual' });
  });

  test("when a customer lists its own orders, then it is 200; another customer's, then 404", async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    await openOrder(app, token, login, 0, 0.1);
    const other = await createCustomer(app, token);
    expect(expectOk(await app.request('GET', `/orders?login=${login}`, { token: customer.token }), 200).items).toHaveLength(1);
    expectError(await app.request('GET', `/orders?login=${login}`, { token: other.token }), 404, 'NOT_FOUND');
  });

  test('when a list is longer than a page, then it comes in pages of page_size with the total, and a page_size over 200 is 422', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 5000);
    const opened = [];
    for (const volume of [0.1, 0.2, 0.3]) opened.push(await openOrder(app, token, login, 0, volume));
    const page = (n: number) => app.request('GET', `/orders?login=${login}&page=${n}&page_size=2`, { token: customer.token });
    const first = expectOk(await page(1), 200);
    expect(first).toMatchObject({ page: 1, page_size: 2, total: 3 });
    const second = expectOk(await page(2), 200);
    expect(second).toMatchObject({ page: 2, page_size: 2, total: 3 });
    expect([...first.items, ...second.items].map((o: { order: number }) => o.order)).toEqual(opened.reverse());
    expect(expectOk(await app.request('GET', `/orders?login=${login}`, { token }), 200)).toMatchObject({
      page: 1,
      page_size: 20,
    });
    expect422(
      await app.request('GET', `/orders?login=${login}&page_size=201`, { token }),
      ['query', 'page_size'],
      'less_than_equal',
    );
  });

  test('when the login is missing, then it is 422 missing at query.login; an unknown status is 422 at query.status', async () => {
    const login = await fundedAccount(app, token, customer.id, market.groupId, 0);
    expect422(await app.request('GET', '/orders', { token }), ['query', 'login'], 'missing');
    expect422(await app.request('GET', `/orders?login=${login}&status=pending`, { token }), ['query', 'status'], 'literal_error');
    expect422(await app.request('GET', '/orders?login=abc', { token }), ['query', 'login']);
  });
});
