import { randomBytes } from 'node:crypto';
import { CONTRACT_SIZE_MAX, MAX_POSITIONS, PRICE_MAX, PRICE_MIN, VOLUME_MAX } from '../../../src/platform/bounds';
import { ALL_QUEUES, QUEUES } from '../../../src/jobs/queues';
import { D, money } from '../../../src/platform/decimal';
import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, setQuote } from '../../helpers/trading';
import { deposit, expect422, expectError, expectOk, ledgerOf, openAccount, sql, uniqueName } from './trading-kit';

/**
 * The extreme corner of platform/bounds.ts: the largest contract, the largest volume and
 * prices at both ends, booked through the widest conversion. Every order that opens also
 * closes and books; what could not be booked is refused when it opens.
 */
let app: TestApp;
let token: string;
let customer: LoggedIn;
let groupId: string;

beforeAll(async () => {
  // No engine: these orders fall from the highest price to the lowest, which stops them out,
  // and the tests close them by hand to see what is booked; the engine would race them to it.
  app = await startTestApp({
    label: 'moneybounds',
    env: { ROLE: 'api', WORKER_QUEUES: ALL_QUEUES.filter((q) => q !== QUEUES.engine).join(',') },
  });
  token = await adminToken(app);
  customer = await createCustomer(app, token);
  // Leverage 1000 keeps the margin of the largest order within what deposits can fund.
  groupId = expectOk(
    await app.request('POST', '/groups', { token, body: { name: uniqueName('B'), default_leverage: 1000 } }),
    201,
  ).id;
  for (const [symbol, base, quote, digits] of [
    ['XBTUSD', 'XBT', 'USD', 6],
    ['XBTJPY', 'XBT', 'JPY', 6],
    ['USDJPY', 'USD', 'JPY', 6],
    ['USDCHF', 'USD', 'CHF', 6],
  ] as const) {
    expectOk(
      await app.request('POST', '/api/platform/instruments', {
        token,
        body: { symbol, digits, contract_size: CONTRACT_SIZE_MAX, base_currency: base, quote_currency: quote },
      }),
      201,
    );
  }
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

async function fundedAccount(currency: string, amount: number, times: number): Promise<number> {
  const login = expectOk(await openAccount(app, token, customer.id, { kind: 'live', group_id: groupId, currency }), 201).login;
  for (let i = 0; i < times; i++) expectOk(await deposit(app, token, login, amount), 201);
  return login;
}

const open = (body: Record<string, unknown>) => app.request('POST', '/orders', { token, body });
const close = (ticket: number) => app.request('POST', `/orders/${ticket}/close`, { token });

describe('the extreme corner', () => {
  test('when the largest order opens at the highest price and closes at the lowest, then the loss is booked exactly', async () => {
    // margin: 1000 lots x 10^6 x 10^7 / 1000 = 10^13 USD
    const login = await fundedAccount('USD', 1e12, 11);
    await setQuote(app, token, 'XBTUSD', PRICE_MAX - 1, PRICE_MAX);
    const opened = expectOk(await open({ login, symbol: 'XBTUSD', cmd: 0, volume: VOLUME_MAX }), 201);
    expect(opened.open_price).toBe(PRICE_MAX);

    await setQuote(app, token, 'XBTUSD', PRICE_MIN, 2 * PRICE_MIN);
    const closed = expectOk(await close(opened.order), 200);
    const expected = money(new D(PRICE_MIN).minus(PRICE_MAX).times(VOLUME_MAX).times(CONTRACT_SIZE_MAX));
    expect(closed.profit).toBe(expected.toFixed(2));
    const rows = await ledgerOf(app, login);
    expect(rows.at(-1)).toMatchObject({ kind: 'trade_profit', amount: expected.toFixed(2) });
    expect(rows.at(-1)!.balance_after).toBe(new D(11e12).plus(expected).toFixed(2));
  });

  test('when a largest order books through two extreme conversion legs, then it closes and fits', async () => {
    // XBTJPY profit in JPY, converted JPY -> USD (1 / USDJPY mid) -> CHF (USDCHF mid).
    await setQuote(app, token, 'USDJPY', 1, 1.000002);
    await setQuote(app, token, 'USDCHF', 1, 1.000002);
    await setQuote(app, token, 'XBTJPY', 1, 1.000002);
    const login = await fundedAccount('CHF', 1e7, 1);
    const opened = expectOk(await open({ login, symbol: 'XBTJPY', cmd: 0, volume: VOLUME_MAX }), 201);

    await setQuote(app, token, 'XBTJPY', PRICE_MAX - 1, PRICE_MAX);
    await setQuote(app, token, 'USDJPY', PRICE_MIN, 2 * PRICE_MIN);
    await setQuote(app, token, 'USDCHF', PRICE_MAX - 1, PRICE_MAX);
    const closed = expectOk(await close(opened.order), 200);
    const inJpy = new D(PRICE_MAX - 1).minus('1.000002').times(VOLUME_MAX).times(CONTRACT_SIZE_MAX);
    const rate = new D(1).div(new D(PRICE_MIN).plus(2 * PRICE_MIN).div(2)).times(new D(PRICE_MAX - 1).plus(PRICE_MAX).div(2));
    expect(closed.profit).toBe(money(inJpy.times(rate)).toFixed(2));
    expect(new D(closed.profit).gt('1e28')).toBe(true);
    const [account] = await sql<{ balance: string }>(app, 'select balance::text from accounts where login = ?', [login]);
    expect(account!.balance).toBe(money(new D(1e7).plus(closed.profit)).toFixed(2));
  });
});

describe('what cannot be booked is refused when it opens', () => {
  test('when a bound is crossed, then it is 422 at the field and nothing is stored', async () => {
    const login = await fundedAccount('USD', 1e6, 1);
    await setQuote(app, token, 'XBTUSD', 100, 101);
    expect422(await open({ login, symbol: 'XBTUSD', cmd: 0, volume: VOLUME_MAX + 0.01 }), ['body', 'volume'], 'less_than_equal');
    expect422(await open({ login, symbol: 'XBTUSD', cmd: 0, volume: 1, tp: PRICE_MAX * 2 }), ['body', 'tp'], 'less_than_equal');
    expect422(
      await app.request('POST', '/api/platform/instruments', {
        token,
        body: { symbol: 'HUGE', digits: 2, contract_size: CONTRACT_SIZE_MAX + 1, base_currency: 'XBT', quote_currency: 'USD' },
      }),
      ['body', 'contract_size'],
      'less_than_equal',
    );
    expect422(
      await app.request('POST', '/simulator/quotes', { token, body: { symbol: 'XBTUSD', bid: 1, ask: PRICE_MAX + 1 } }),
      ['body', 'ask'],
      'less_than_equal',
    );
    const [count] = await sql<{ n: number }>(app, 'select count(*)::int as n from orders where login = ?', [login]);
    expect(count!.n).toBe(0);
  });

  test('when an account holds the most positions it may, then the next order is 409 POSITION_LIMIT_REACHED', async () => {
    const login = await fundedAccount('USD', 1e6, 1);
    await setQuote(app, token, 'XBTUSD', 100, 101);
    // Fill the account with resting pending orders straight in the database: 10,000 through HTTP would take minutes.
    await sql(
      app,
      `insert into pending_orders (id, created_at, updated_at, request_id, account_id, login, symbol, cmd, volume, trigger_price, status)
       select gen_random_uuid(), now(), now(), gen_random_uuid(), a.id, a.login, 'XBTUSD', 2, 0.01, 50, 'pending'
         from accounts a, generate_series(1, ?) where a.login = ?`,
      [MAX_POSITIONS, login],
    );
    expectError(await open({ login, symbol: 'XBTUSD', cmd: 0, volume: 0.01 }), 409, 'POSITION_LIMIT_REACHED');
    expectError(
      await app.request('POST', '/orders/pending', {
        token,
        body: { login, symbol: 'XBTUSD', cmd: 2, volume: 0.01, trigger_price: 50 },
      }),
      409,
      'POSITION_LIMIT_REACHED',
    );
  });

  test('when a balance reaches the largest an account may hold, then credits are 422 at amount and orders 409', async () => {
    const login = await fundedAccount('USD', 1e6, 1);
    await setQuote(app, token, 'XBTUSD', 100, 101);
    // A balance of 10^30 - 10^6 (the deposit of 10^6 included), booked as a ledger row so balance = sum of ledger rows still holds.
    const ref = randomBytes(4).toString('hex');
    await sql(
      app,
      `with a as (update accounts set balance = balance + ?::numeric where login = ? returning id, balance)
       insert into ledger_entries (id, created_at, updated_at, account_id, kind, amount, balance_after, reference_type, reference_id)
       select gen_random_uuid(), now(), now(), a.id, 'adjustment', ?::numeric, a.balance, 'test', ? from a`,
      ['999999999999999999999998000000', login, '999999999999999999999998000000', ref],
    );
    // This deposit also guards the ORM: its float comparison once saw no change at this size,
    // skipped the balance UPDATE and left a ledger row for a balance that never moved.
    expectOk(await deposit(app, token, login, 1000), 201);
    expect422(await deposit(app, token, login, 1e12), ['body', 'amount']);
    await sql(
      app,
      `with a as (update accounts set balance = balance + ?::numeric where login = ? returning id, balance)
       insert into ledger_entries (id, created_at, updated_at, account_id, kind, amount, balance_after, reference_type, reference_id)
       select gen_random_uuid(), now(), now(), a.id, 'adjustment', ?::numeric, a.balance, 'test', ? from a`,
      ['2000000', login, '2000000', `${ref}-2`],
    );
    expectError(await open({ login, symbol: 'XBTUSD', cmd: 0, volume: 0.01 }), 409, 'BALANCE_LIMIT_REACHED');
  });
});
