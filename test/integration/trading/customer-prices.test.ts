import { randomBytes } from 'node:crypto';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { setQuote, setUpMarket } from '../../helpers/trading';
import { expect422, expectError, expectOk } from './trading-kit';

/**
 * Every caller may read the latest quotes (GET /quotes), and a customer may read what it can
 * trade and on what terms (GET /customers/me/instruments), only for the groups its accounts
 * trade under. A group trades every instrument its row does not disable, as orders do. Every 200 below has also passed its route's
 * declared schema: under NODE_ENV=test a reply that breaks it is a 500.
 */
let app: TestApp;
let admin: string;
let groupA: string;
let groupB: string;
/** An account in group A only, one in group B only, one in both, one with only a wallet. */
let inA: LoggedIn;
let inB: LoggedIn;
let inBoth: LoggedIn;
let walletOnly: LoggedIn;
let loginA: number;
let loginB: number;
let bothA: number;
let bothB: number;

async function account(customer: LoggedIn, groupId: string): Promise<number> {
  return expectOk(
    await app.request('POST', `/api/crm/customers/${customer.id}/accounts`, {
      token: admin,
      body: { kind: 'live', group_id: groupId },
    }),
    201,
  ).login;
}

async function trade(groupId: string, symbol: string, terms: Record<string, unknown>): Promise<void> {
  // 201 when the row is new, 200 when it replaces one.
  const res = await app.request('PUT', `/groups/${groupId}/instruments/${symbol}`, { token: admin, body: terms });
  if (res.status !== 200 && res.status !== 201) throw new Error(`trade ${symbol}: ${res.status} ${res.text}`);
}

async function instrument(symbol: string, digits: number): Promise<void> {
  expectOk(
    await app.request('POST', '/api/platform/instruments', {
      token: admin,
      body: { symbol, digits, contract_size: 100000, base_currency: symbol.slice(0, 3), quote_currency: symbol.slice(3, 6) },
    }),
    201,
  );
}

beforeAll(async () => {
  app = await startTestApp({ label: 'custprices', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  groupA = (await setUpMarket(app, admin)).groupId; // EURUSD 1.1 / 1.1002, USDJPY 150 / 150.02
  groupB = expectOk(
    await app.request('POST', '/groups', { token: admin, body: { name: `B-${randomBytes(4).toString('hex')}` } }),
    201,
  ).id;
  await instrument('GBPUSD', 5);
  await instrument('XAUUSD', 2); // never quoted, no group row
  await instrument('AUDUSD', 5); // quoted, no group row: every group trades it at the raw quote
  await setQuote(app, admin, 'GBPUSD', 1.27, 1.2703);
  await setQuote(app, admin, 'AUDUSD', 0.65, 0.6502);
  await trade(groupA, 'EURUSD', { enabled: true, spread: 2, commission_value: 3.5, swap_long: -1.2, swap_short: 0.4 });
  await trade(groupA, 'USDJPY', { enabled: true, spread: 1.5, swap_long: 0.3, swap_short: -0.9 });
  await trade(groupA, 'GBPUSD', { enabled: false, spread: 4, swap_long: 0, swap_short: 0 });
  await trade(groupB, 'GBPUSD', { enabled: true, spread: 9, commission_value: 7, swap_long: -5, swap_short: -5 });
  inA = await createCustomer(app, admin);
  inB = await createCustomer(app, admin);
  inBoth = await createCustomer(app, admin);
  walletOnly = await createCustomer(app, admin);
  loginA = await account(inA, groupA);
  loginB = await account(inB, groupB);
  bothA = await account(inBoth, groupA);
  bothB = await account(inBoth, groupB);
}, 60_000);
afterAll(() => app?.stop());

const symbolsOf = (items: Array<{ symbol: string }>) => items.map((i) => i.symbol);

describe('GET /quotes', () => {
  test('when a customer asks for two symbols, then their latest bid, ask, time and digits come back by symbol', async () => {
    const body = expectOk(await app.request('GET', '/quotes?symbols=USDJPY,EURUSD', { token: inA.token }), 200);
    expect(body).toMatchObject({ page: 1, total: 2 });
    expect(body.items).toEqual([
      { symbol: 'EURUSD', bid: 1.1, ask: 1.1002, digits: 5, updated_at: expect.any(String) },
      { symbol: 'USDJPY', bid: 150, ask: 150.02, digits: 3, updated_at: expect.any(String) },
    ]);
    expect(Number.isNaN(Date.parse(body.items[0].updated_at))).toBe(false);
  });

  test('when staff without any trading permission and an API token of an unrelated scope ask, then they read quotes too', async () => {
    const staff = await createStaff(app, ['view_audit'], admin);
    const apiToken = expectOk(
      await app.request('POST', '/api/crm/settings/api-tokens', {
        token: admin,
        body: { name: `quotes-${randomBytes(4).toString('hex')}`, scopes: ['view_audit'] },
      }),
      201,
    ).token;
    for (const token of [staff.token, apiToken, admin]) {
      const body = expectOk(await app.request('GET', '/quotes?symbols=GBPUSD', { token }), 200);
      expect(body.items).toEqual([{ symbol: 'GBPUSD', bid: 1.27, ask: 1.2703, digits: 5, updated_at: expect.any(String) }]);
    }
  });

  test('when nobody is logged in, then 401', async () => {
    expectError(await app.request('GET', '/quotes?symbols=EURUSD'), 401, 'UNAUTHENTICATED');
  });

  test('when a symbol names no instrument, then 422 at symbols naming it, not an answer without it', async () => {
    const res = await app.request('GET', '/quotes?symbols=EURUSD,EURUSX,NOPE', { token: inA.token });
    expect422(res, ['query', 'symbols']);
    expect(res.body.detail[0].msg).toContain('EURUSX, NOPE');
  });

  test('when the list is malformed, empty or longer than 50, then 422 at symbols', async () => {
    expect422(
      await app.request('GET', '/quotes?symbols=eurusd', { token: inA.token }),
      ['query', 'symbols', 0],
      'string_pattern_mismatch',
    );
    expect422(await app.request('GET', '/quotes?symbols=,', { token: inA.token }), ['query', 'symbols'], 'too_short');
    const many = Array.from({ length: 51 }, (_, i) => `S${i}`).join(',');
    expect422(await app.request('GET', `/quotes?symbols=${many}`, { token: inA.token }), ['query', 'symbols'], 'too_long');
  });

  test('when an instrument has no price at the moment, then it is left out rather than refused', async () => {
    const body = expectOk(await app.request('GET', '/quotes?symbols=XAUUSD,EURUSD', { token: inA.token }), 200);
    expect(symbolsOf(body.items)).toEqual(['EURUSD']);
  });

  test('when no symbols are given, then every priced instrument the customer may trade comes back by symbol, paged', async () => {
    const all = expectOk(await app.request('GET', '/quotes', { token: inB.token }), 200);
    // Group B has a row for GBPUSD only; the others trade without one. XAUUSD has no price: not listed.
    expect(symbolsOf(all.items)).toEqual(['AUDUSD', 'EURUSD', 'GBPUSD', 'USDJPY']);
    expect(all).toMatchObject({ page: 1, page_size: 20, total: 4 });
    const second = expectOk(await app.request('GET', '/quotes?page=2&page_size=1', { token: inB.token }), 200);
    expect(second).toMatchObject({ page: 2, page_size: 1, total: 4 });
    expect(symbolsOf(second.items)).toEqual(['EURUSD']);
    expect422(await app.request('GET', '/quotes?page_size=201', { token: inB.token }), ['query', 'page_size']);
  });

  test('when the only group of a customer disables an instrument, then its list leaves it out; with another group trading it, it is in', async () => {
    expect(symbolsOf(expectOk(await app.request('GET', '/quotes', { token: inA.token }), 200).items)).toEqual([
      'AUDUSD',
      'EURUSD',
      'USDJPY',
    ]);
    expect(symbolsOf(expectOk(await app.request('GET', '/quotes', { token: inBoth.token }), 200).items)).toEqual([
      'AUDUSD',
      'EURUSD',
      'GBPUSD',
      'USDJPY',
    ]);
  });

  test('when a customer has only its wallet, then its list is empty, while staff see every priced instrument', async () => {
    expect(expectOk(await app.request('GET', '/quotes', { token: walletOnly.token }), 200)).toMatchObject({
      items: [],
      total: 0,
    });
    expect(symbolsOf(expectOk(await app.request('GET', '/quotes', { token: admin }), 200).items)).toEqual([
      'AUDUSD',
      'EURUSD',
      'GBPUSD',
      'USDJPY',
    ]);
  });
});

describe('GET /customers/me/instruments', () => {
  test("when a customer with an account in group A asks, then every instrument A does not disable comes with A's terms and nothing of B", async () => {
    const body = expectOk(await app.request('GET', '/customers/me/instruments', { token: inA.token }), 200);
    expect(body.items).toHaveLength(1);
    const [terms] = body.items;
    expect(terms).toMatchObject({ group_id: groupA, logins: [loginA], commission_type: 'none', swap_enabled: true });
    expect(terms).not.toHaveProperty('name');
    expect(terms).not.toHaveProperty('max_exposure');
    // GBPUSD is disabled in A (and enabled in B, which this customer has no account in);
    // AUDUSD and XAUUSD have no row in A, so A trades them at the raw quote without swap.
    expect(symbolsOf(terms.instruments)).toEqual(['AUDUSD', 'EURUSD', 'USDJPY', 'XAUUSD']);
    expect(terms.instruments[0]).toEqual({
      symbol: 'AUDUSD',
      description: null,
      digits: 5,
      contract_size: 100000,
      base_currency: 'AUD',
      quote_currency: 'USD',
      spread: 0,
      commission_value: null,
      swap_long: 0,
      swap_short: 0,
    });
    expect(terms.instruments[1]).toEqual({
      symbol: 'EURUSD',
      description: null,
      digits: 5,
      contract_size: 100000,
      base_currency: 'EUR',
      quote_currency: 'USD',
      spread: 2,
      commission_value: 3.5,
      swap_long: -1.2,
      swap_short: 0.4,
    });
    expect(terms.instruments[2]).toMatchObject({ symbol: 'USDJPY', spread: 1.5, commission_value: null });
  });

  test("when a customer with an account in group B asks, then only B's terms come back", async () => {
    const body = expectOk(await app.request('GET', '/customers/me/instruments', { token: inB.token }), 200);
    expect(body.items.map((g: { group_id: string }) => g.group_id)).toEqual([groupB]);
    expect(body.items[0].logins).toEqual([loginB]);
    expect(symbolsOf(body.items[0].instruments)).toEqual(['AUDUSD', 'EURUSD', 'GBPUSD', 'USDJPY', 'XAUUSD']);
    expect(body.items[0].instruments[2]).toEqual(expect.objectContaining({ symbol: 'GBPUSD', spread: 9, commission_value: 7 }));
  });

  test('when a customer has accounts in both groups, then each group comes once with its own logins', async () => {
    const body = expectOk(await app.request('GET', '/customers/me/instruments', { token: inBoth.token }), 200);
    expect(body.items.map((g: { group_id: string; logins: number[] }) => [g.group_id, g.logins])).toEqual([
      [groupA, [bothA]],
      [groupB, [bothB]],
    ]);
  });

  test('when a customer has only its wallet, then there is nothing to trade', async () => {
    expect(expectOk(await app.request('GET', '/customers/me/instruments', { token: walletOnly.token }), 200)).toEqual({
      items: [],
    });
  });

  test('when staff or nobody asks, then 403 and 401: the route is the calling customer’s', async () => {
    expectError(await app.request('GET', '/customers/me/instruments', { token: admin }), 403, 'FORBIDDEN');
    expectError(await app.request('GET', '/customers/me/instruments'), 401, 'UNAUTHENTICATED');
  });

  test('when staff change a group instrument, then the customer sees the new terms at once', async () => {
    await trade(groupB, 'GBPUSD', { enabled: true, spread: 11, swap_long: -4, swap_short: -6 });
    const body = expectOk(await app.request('GET', '/customers/me/instruments', { token: inB.token }), 200);
    expect(body.items[0].instruments[2]).toMatchObject({
      symbol: 'GBPUSD',
      spread: 11,
      commission_value: null,
      swap_long: -4,
      swap_short: -6,
    });
  });
});
