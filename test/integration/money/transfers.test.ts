import Decimal from 'decimal.js';
import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, openOrder, setQuote, setUpMarket, type Market } from '../../helpers/trading';
import { eventsOf, expect422, expectError, expectOk, ledgerOf, openAccount } from '../trading/trading-kit';
import { accountState, transfer, walletOf } from './money-kit';

/**
 * Endpoint 12, POST /customers/me/transfer: both logins the caller's,
 * conversion at the dealer side of the latest quotes, two ledger legs, the transfer record and
 * the transfer.completed event in one transaction, and the exact result fields.
 */
let app: TestApp;
let admin: string;
let market: Market;
let alice: LoggedIn;
let wallet: number;
let usdLive: number;
let eurLive: number;
let jpyLive: number;

const RESULT_FIELDS = [
  'amount',
  'converted_amount',
  'effective_rate',
  'from_currency',
  'from_login',
  'source',
  'status',
  'to_currency',
  'to_login',
  'transfer_in_id',
  'transfer_out_id',
];

async function deposit(login: number, amount: number): Promise<void> {
  expectOk(await app.request('POST', `/api/backoffice/accounts/${login}/deposits`, { token: admin, body: { amount } }), 201);
}

async function liveAccount(customer: LoggedIn, currency: string): Promise<number> {
  return expectOk(await openAccount(app, admin, customer.id, { kind: 'live', group_id: market.groupId, currency }), 201).login;
}

beforeAll(async () => {
  app = await startTestApp({ label: 'transfers', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  market = await setUpMarket(app, admin);
  alice = await createCustomer(app, admin);
  wallet = await walletOf(app, alice);
  usdLive = await liveAccount(alice, 'USD');
  eurLive = await liveAccount(alice, 'EUR');
  jpyLive = await liveAccount(alice, 'JPY');
  await deposit(wallet, 10_000);
});
afterAll(() => app?.stop());
afterEach(async () => {
  await expectLedgerBalanced(app);
  // The quotes some tests move, back where setUpMarket put them.
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
  await setQuote(app, admin, 'USDJPY', 150, 150.02);
});

describe('a transfer between two accounts of one currency', () => {
  test('when it completes, then it answers 200 with exactly the transfer result fields, identity conversion and both legs booked', async () => {
    const before = await accountState(app, wallet);
    const res = await transfer(app, alice, wallet, usdLive, 250.5);
    const body = expectOk(res, 200);
    expect(Object.keys(body).sort()).toEqual(RESULT_FIELDS);
    expect(body).toMatchObject({
      from_login: String(wallet),
      to_login: String(usdLive),
      amount: 250.5,
      from_currency: 'USD',
      to_currency: 'USD',
      converted_amount: 250.5,
      status: 'completed',
      source: 'identity',
      effective_rate: 1,
    });
    expect(body.transfer_out_id).not.toBe(body.transfer_in_id);
    expect(new Decimal((await accountState(app, wallet)).balance).toFixed(2)).toBe(
      new Decimal(before.balance).minus('250.50').toFixed(2),
    );
    expect((await accountState(app, usdLive)).balance).toBe('250.50');

    // The legs are the ledger rows with the answer's ids, both naming the transfer.
    const legs = await sql<{ id: string; login: string; kind: string; amount: string; reference_id: string }>(
      app,
      `select l.id, a.login::text as login, l.kind, l.amount::text as amount, l.reference_id
         from ledger_entries l join accounts a on a.id = l.account_id where l.reference_type = 'transfer' and l.reference_id = ? order by l.seq`,
      [body.transfer_out_id],
    );
    expect(legs).toEqual([
      {
        id: body.transfer_out_id,
        login: String(wallet),
        kind: 'transfer_out',
        amount: '-250.50',
        reference_id: body.transfer_out_id,
      },
      {
        id: body.transfer_in_id,
        login: String(usdLive),
        kind: 'transfer_in',
        amount: '250.50',
        reference_id: body.transfer_out_id,
      },
    ]);
  });

  test('when it completes, then one transfer.completed event carries the result and created_at, for the customer', async () => {
    const body = expectOk(await transfer(app, alice, wallet, usdLive, 1), 200);
    const events = await eventsOf(app, 'transfer.completed', body.transfer_out_id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ aggregate_type: 'transfer', customer_id: alice.id });
    const { created_at: createdAt, ...data } = events[0]!.data;
    expect(data).toEqual(body);
    expect(new Date(createdAt).toISOString()).toBe(createdAt);
    const [record] = await sql<{ created_at: Date }>(app, 'select created_at from transfers where id = ?', [
      body.transfer_out_id,
    ]);
    expect(new Date(record!.created_at).toISOString()).toBe(createdAt);
  });

  test('when the logins come as JSON integers or as digits text, then both are accepted', async () => {
    expectOk(await transfer(app, alice, String(wallet), String(usdLive), 1), 200);
    expectOk(await transfer(app, alice, wallet, String(usdLive), 1), 200);
  });
});

describe('conversion at the dealer side of the latest quote', () => {
  test('when USD goes to a EUR account, then it divides by the EURUSD ask (the inverted symbol)', async () => {
    const body = expectOk(await transfer(app, alice, wallet, eurLive, 100), 200);
    // 100 / 1.1002 = 90.8925...
    expect(body).toMatchObject({ source: 'EURUSD', converted_amount: 90.89, from_currency: 'USD', to_currency: 'EUR' });
    expect(body.effective_rate).toBeCloseTo(0.9089, 12);
    const rows = await ledgerOf(app, eurLive);
    expect(rows[rows.length - 1]).toMatchObject({ kind: 'transfer_in', amount: '90.89' });
  });

  test('when EUR goes back to USD, then it multiplies by the EURUSD bid (the direct symbol)', async () => {
    await transfer(app, alice, wallet, eurLive, 200);
    const body = expectOk(await transfer(app, alice, eurLive, wallet, 50), 200);
    expect(body).toMatchObject({ source: 'EURUSD', amount: 50, converted_amount: 55, effective_rate: 1.1 });
  });

  test('when EUR goes to JPY, then it crosses through USD, each leg at its dealer side, rounded once', async () => {
    await setQuote(app, admin, 'EURUSD', 1.10007, 1.10021);
    await setQuote(app, admin, 'USDJPY', 149.993, 150.011);
    await transfer(app, alice, wallet, eurLive, 200);
    const body = expectOk(await transfer(app, alice, eurLive, jpyLive, 33.33), 200);
    // 33.33 x 1.10007 x 149.993 = 5499.6596... : one rounding at the end
    const exact = new Decimal('33.33').times('1.10007').times('149.993');
    expect(body).toMatchObject({
      source: 'EURUSD,USDJPY',
      converted_amount: Number(exact.toDecimalPlaces(2, Decimal.ROUND_DOWN)),
    });
    expect(body.effective_rate).toBeCloseTo(body.converted_amount / 33.33, 12);
    // and back: / USDJPY ask, / EURUSD ask
    const back = expectOk(await transfer(app, alice, jpyLive, eurLive, 1000), 200);
    const wide = Decimal.clone({ precision: 100 });
    const expected = new wide(1000).div(new wide('150.011').times('1.10021')).toDecimalPlaces(2, Decimal.ROUND_DOWN);
    expect(back).toMatchObject({ source: 'USDJPY,EURUSD', converted_amount: Number(expected) });
  });

  test('when the quote moves, then the next transfer converts at the new one', async () => {
    await setQuote(app, admin, 'EURUSD', 1.2, 1.25);
    const body = expectOk(await transfer(app, alice, wallet, eurLive, 125), 200);
    expect(body.converted_amount).toBe(100);
  });

  test('when the transfer record is read back, then converted = amount x multiplier / divisor, rounded toward zero', async () => {
    const body = expectOk(await transfer(app, alice, wallet, jpyLive, 12.34), 200);
    const [row] = await sql<Record<string, string>>(
      app,
      `select amount::text, converted_amount::text, rate_multiplier::text, rate_divisor::text, source, from_login::text, to_login::text
         from transfers where id = ?`,
      [body.transfer_out_id],
    );
    expect(row).toMatchObject({ amount: '12.34', source: 'USDJPY', from_login: String(wallet), to_login: String(jpyLive) });
    const wide = Decimal.clone({ precision: 100 });
    const recomputed = new wide(row!.amount!)
      .times(row!.rate_multiplier!)
      .div(row!.rate_divisor!)
      .toDecimalPlaces(2, Decimal.ROUND_DOWN);
    expect(row!.converted_amount).toBe(recomputed.toFixed(2));
    expect(row!.converted_amount).toBe('1851.00'); // 12.34 x 150
  });

  test('when no quote joins the currencies, then 422 at to_login says why and nothing moves', async () => {
    const before = await accountState(app, eurLive);
    const removed = await app.request('DELETE', '/simulator/quotes/EURUSD', { token: admin });
    expect(removed.status).toBe(204);
    const res = await transfer(app, alice, wallet, eurLive, 10);
    expect422(res, ['body', 'to_login']);
    expect(res.body.detail[0].msg).toMatch(/No quote converts USD into EUR/);
    expect(await accountState(app, eurLive)).toEqual(before);
  });
});

describe('what the source can give', () => {
  test('when the amount exceeds the wallet balance less its pending withdrawals, then 422 at amount and nothing moves', async () => {
    const bob = await createCustomer(app, admin);
    const bobWallet = await walletOf(app, bob);
    const bobLive = expectOk(await openAccount(app, admin, bob.id, { kind: 'live', group_id: market.groupId }), 201).login;
    await deposit(bobWallet, 100);
    expectOk(
      await app.request('POST', '/customers/me/withdraw', {
        token: bob.token,
        body: { amount: 60, payment_data: { iban: 'x' } },
      }),
      202,
    );
    const res = await transfer(app, bob, bobWallet, bobLive, 40.01);
    expect422(res, ['body', 'amount']);
    expect(res.body.detail[0].msg).toMatch(/40\.00 USD available/);
    expectOk(await transfer(app, bob, bobWallet, bobLive, 40), 200);
    expect(await accountState(app, bobWallet)).toMatchObject({ balance: '60.00', reserved: '60.00' });
  });

  test('when a live account has open positions, then only its free margin can leave, never more than its balance', async () => {
    const carol = await createCustomer(app, admin);
    const carolWallet = await walletOf(app, carol);
    const live = await fundedAccount(app, admin, carol.id, market.groupId, 1000);
    // 1 lot EURUSD at 1.1002, leverage 100: 1,100.20 margin > balance. 0.5 lots: 550.10.
    await openOrder(app, admin, live, 0, 0.5);
    const account = (await app.request('GET', `/api/crm/accounts/${live}`, { token: admin })).body;
    const free = new Decimal(account.free_margin);
    expect(free.lt(1000)).toBe(true);
    expect422(await transfer(app, carol, live, carolWallet, Number(free.plus('0.01'))), ['body', 'amount']);
    expectOk(await transfer(app, carol, live, carolWallet, Number(free)), 200);
    const after = (await app.request('GET', `/api/crm/accounts/${live}`, { token: admin })).body;
    expect(after.free_margin).toBe('0.00');

    // Floating profit is not money yet: a rally lifts free margin above the balance, and still only the balance can go.
    await setQuote(app, admin, 'EURUSD', 1.2, 1.2002);
    const rallied = (await app.request('GET', `/api/crm/accounts/${live}`, { token: admin })).body;
    expect(new Decimal(rallied.free_margin).gt(rallied.balance)).toBe(true);
    expect422(await transfer(app, carol, live, carolWallet, Number(new Decimal(rallied.balance).plus('0.01'))), [
      'body',
      'amount',
    ]);
  });

  test('when an amount converts to less than a cent, then 422 at amount', async () => {
    await transfer(app, alice, wallet, jpyLive, 1);
    expect422(await transfer(app, alice, jpyLive, wallet, 0.01), ['body', 'amount']);
  });
});

describe('who and what may transfer', () => {
  test("when a login is another customer's or does not exist, then 404 with the same answer and nothing moves", async () => {
    const mallory = await createCustomer(app, admin);
    const malloryWallet = await walletOf(app, mallory);
    const before = await accountState(app, wallet);
    const theirs = await transfer(app, mallory, malloryWallet, wallet, 1);
    const fromTheirs = await transfer(app, mallory, wallet, malloryWallet, 1);
    const missing = await transfer(app, mallory, malloryWallet, 999_999_999, 1);
    for (const res of [theirs, fromTheirs, missing]) expectError(res, 404, 'NOT_FOUND');
    expect(theirs.body).toEqual(missing.body);
    expect(fromTheirs.body).toEqual(missing.body);
    expect(await accountState(app, wallet)).toEqual(before);
  });

  test('when both logins are the same, then 422 at to_login', async () => {
    expect422(await transfer(app, alice, wallet, wallet, 1), ['body', 'to_login']);
  });

  test.each([
    [0, 'greater_than'],
    [-5, 'greater_than'],
    [1.001, 'decimal_max_places'],
    ['10', 'float_type'],
  ])('when the amount is %p, then 422 at amount (%s)', async (amount, type) => {
    expect422(await transfer(app, alice, wallet, usdLive, amount), ['body', 'amount'], type);
  });

  test('when a login is not digits, then 422 at that field', async () => {
    expect422(await transfer(app, alice, 'abc', usdLive, 1), ['body', 'from_login']);
    expect422(await transfer(app, alice, wallet, -3, 1), ['body', 'to_login']);
  });

  test('when a demo or prop account takes part, then 422 at its login and nothing moves', async () => {
    const demo = expectOk(await openAccount(app, admin, alice.id, { kind: 'demo', group_id: market.groupId }), 201).login;
    const prop = expectOk(await openAccount(app, admin, alice.id, { kind: 'prop', group_id: market.groupId }), 201).login;
    await deposit(demo, 1000);
    await deposit(prop, 1000);
    expect422(await transfer(app, alice, demo, wallet, 10), ['body', 'from_login']);
    expect422(await transfer(app, alice, wallet, demo, 10), ['body', 'to_login']);
    expect422(await transfer(app, alice, prop, wallet, 10), ['body', 'from_login']);
    expect422(await transfer(app, alice, wallet, prop, 10), ['body', 'to_login']);
    expect((await accountState(app, demo)).balance).toBe('1000.00');
    expect((await accountState(app, prop)).balance).toBe('1000.00');
  });

  test('when staff call it, then 403: it is the customer route family', async () => {
    expectError(
      await app.request('POST', '/customers/me/transfer', {
        token: admin,
        body: { from_login: wallet, to_login: usdLive, amount: 1 },
      }),
      403,
      'FORBIDDEN',
    );
  });
});

describe('Idempotency-Key on transfers', () => {
  test('when the same key and body come twice, then the first answer is replayed and money moves once', async () => {
    const before = await accountState(app, usdLive);
    const answer = await transfer(app, alice, wallet, usdLive, 7, 'tr-1');
    const first = expectOk(answer, 200);
    const second = await transfer(app, alice, wallet, usdLive, 7, 'tr-1');
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    // The same bytes: the same fields in the same order, not only an equal object.
    expect(second.text).toBe(answer.text);
    expect(new Decimal((await accountState(app, usdLive)).balance).minus(before.balance).toFixed(2)).toBe('7.00');
    expect(await sql(app, 'select 1 from transfers where id = ?', [first.transfer_out_id])).toHaveLength(1);
  });

  test('when the same key comes with another body, then 422 at the header', async () => {
    await transfer(app, alice, wallet, usdLive, 3, 'tr-2');
    expect422(await transfer(app, alice, wallet, usdLive, 4, 'tr-2'), ['header', 'Idempotency-Key']);
  });

  test('when a keyed transfer fails its funds check, then the key is free for the corrected request', async () => {
    expect422(await transfer(app, alice, wallet, usdLive, 999_999, 'tr-3'), ['body', 'amount']);
    expect422(await transfer(app, alice, wallet, usdLive, 999_999, 'tr-3'), ['body', 'amount']);
  });
});

describe('opening an account needs a quote path to USD', () => {
  test('when the currency has no quoted symbol joining it to USD, then 422 at currency and no account', async () => {
    const before = await sql(app, 'select 1 from accounts where customer_id = ?', [alice.id]);
    const res = await openAccount(app, admin, alice.id, { kind: 'live', group_id: market.groupId, currency: 'CHF' });
    expect422(res, ['body', 'currency']);
    expect(res.body.detail[0].msg).toMatch(/CHF has no quoted symbol joining it to USD/);
    expect(await sql(app, 'select 1 from accounts where customer_id = ?', [alice.id])).toHaveLength(before.length);
  });

  test('when the group currency has no path and no currency is given, then 422 at currency naming the group', async () => {
    const group = expectOk(
      await app.request('POST', '/groups', { token: admin, body: { name: 'CHF desk', currency: 'CHF' } }),
      201,
    );
    const res = await openAccount(app, admin, alice.id, { kind: 'live', group_id: group.id });
    expect422(res, ['body', 'currency']);
    expect(res.body.detail[0].msg).toMatch(/group's currency CHF/);
  });

  test('when the symbol joins it the other way round (USDJPY for JPY) and is quoted, then the account opens', async () => {
    expectOk(await openAccount(app, admin, alice.id, { kind: 'live', group_id: market.groupId, currency: 'JPY' }), 201);
  });
});
