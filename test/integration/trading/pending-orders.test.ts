import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, openOrder, setQuote, setUpMarket, type Market } from '../../helpers/trading';
import { allPages, eventsOf, expect422, expectError, expectOk, sql } from './trading-kit';

let app: TestApp;
let token: string;
let market: Market;
let customer: LoggedIn;
let login: number;

beforeAll(async () => {
  app = await startTestApp({ label: 'pending', env: { ROLE: 'api' } });
  token = await adminToken(app);
  market = await setUpMarket(app, token);
  customer = await createCustomer(app, token);
  login = await fundedAccount(app, token, customer.id, market.groupId, 10_000);
});
afterAll(() => app?.stop());
// EURUSD 1.1000 / 1.1002: buys compare with the ask, sells with the bid.
beforeEach(() => setQuote(app, token, 'EURUSD', 1.1, 1.1002));
afterEach(() => expectLedgerBalanced(app));

const PENDING_FIELDS = [
  'order',
  'request_id',
  'login',
  'symbol',
  'cmd',
  'volume',
  'trigger_price',
  'sl',
  'tp',
  'expiry_at',
  'comment',
  'status',
  'created_at',
  'triggered_at',
  'filled_order',
  'limit_price',
  'trailing_stop',
];

function expectPendingShape(body: Record<string, unknown>): void {
  expect(Object.keys(body).sort()).toEqual(expect.arrayContaining([...PENDING_FIELDS].sort()));
  expect(Number.isSafeInteger(body.order)).toBe(true);
  expect(body.request_id).toMatch(/^[0-9a-f-]{36}$/);
  expect(Number.isSafeInteger(body.login)).toBe(true);
  expect(typeof body.created_at).toBe('string');
}

/** A valid example of each pending cmd at the market above, with stops around its fill price. */
const EXAMPLES: Record<number, Record<string, number>> = {
  2: { trigger_price: 1.09, sl: 1.08, tp: 1.12 }, // buy limit: below the ask
  3: { trigger_price: 1.11, sl: 1.12, tp: 1.09 }, // sell limit: above the bid
  4: { trigger_price: 1.11, sl: 1.1, tp: 1.12 }, // buy stop: above the ask
  5: { trigger_price: 1.09, sl: 1.1, tp: 1.08 }, // sell stop: below the bid
  6: { trigger_price: 1.11, limit_price: 1.105, sl: 1.1, tp: 1.12 }, // buy stop limit: limit below the trigger
  7: { trigger_price: 1.09, limit_price: 1.095, sl: 1.1, tp: 1.08 }, // sell stop limit: limit above the trigger
};

const create = (body: Record<string, unknown>, as = token) => app.request('POST', '/orders/pending', { token: as, body });
const patch = (id: number, body: unknown, opts: { login?: number | null; as?: string } = {}) => {
  const l = opts.login === undefined ? login : opts.login;
  return app.request('PATCH', `/orders/pending/${id}${l === null ? '' : `?login=${l}`}`, { token: opts.as ?? token, body });
};
const cancel = (id: number, opts: { login?: number; as?: string } = {}) =>
  app.request('DELETE', `/orders/pending/${id}?login=${opts.login ?? login}`, { token: opts.as ?? token });

async function place(cmd: number, extra: Record<string, unknown> = {}, onLogin = login): Promise<any> {
  return expectOk(await create({ login: onLogin, symbol: 'EURUSD', cmd, volume: 0.1, ...EXAMPLES[cmd], ...extra }), 201, 'place');
}

async function stored(id: number) {
  const list = await allPages(app, token, `/orders/pending?login=${login}`);
  return list.find((o: { order: number }) => o.order === id);
}

describe('POST /orders/pending', () => {
  test.each([2, 3, 4, 5, 6, 7])(
    'when cmd %i is placed on the right side of the market, then it is 201 pending with every field',
    async (cmd) => {
      const body = await place(cmd, { comment: `cmd ${cmd}`, trailing_stop: 0.002 });
      expectPendingShape(body);
      expect(body).toMatchObject({
        login,
        symbol: 'EURUSD',
        cmd,
        volume: 0.1,
        ...EXAMPLES[cmd],
        limit_price: EXAMPLES[cmd]!.limit_price ?? null,
        trailing_stop: 0.002,
        comment: `cmd ${cmd}`,
        status: 'pending',
        expiry_at: null,
        triggered_at: null,
        filled_order: null,
      });
    },
  );

  test.each([
    [2, 1.1002, 'buy limit at the ask'],
    [2, 1.11, 'buy limit above the market'],
    [3, 1.1, 'sell limit at the bid'],
    [3, 1.09, 'sell limit below the market'],
    [4, 1.1002, 'buy stop at the ask'],
    [4, 1.09, 'buy stop below the market'],
    [5, 1.1, 'sell stop at the bid'],
    [5, 1.11, 'sell stop above the market'],
    [6, 1.1, 'buy stop limit below the market'],
    [7, 1.105, 'sell stop limit above the market'],
  ])('when cmd %i has trigger %p (%s), then it is 422 at body.trigger_price', async (cmd, trigger) => {
    const limit = cmd === 6 ? trigger - 0.001 : cmd === 7 ? trigger + 0.001 : undefined;
    const res = await create({
      login,
      symbol: 'EURUSD',
      cmd,
      volume: 0.1,
      trigger_price: trigger,
      ...(limit === undefined ? {} : { limit_price: Number(limit.toFixed(5)) }),
    });
    expect422(res, ['body', 'trigger_price']);
  });

  test('when a trigger sits between bid and ask, then buy limit and sell limit both accept it', async () => {
    // 1.1001 is below the ask (buy limit) and above the bid (sell limit).
    expectOk(await create({ login, symbol: 'EURUSD', cmd: 2, volume: 0.1, trigger_price: 1.1001 }), 201);
    expectOk(await create({ login, symbol: 'EURUSD', cmd: 3, volume: 0.1, trigger_price: 1.1001 }), 201);
  });

  test.each([
    [6, 1.11, 'equal to the trigger'],
    [6, 1.115, 'above the trigger of a buy'],
    [7, 1.09, 'equal to the trigger'],
    [7, 1.085, 'below the trigger of a sell'],
  ])('when a stop-limit cmd %i has limit_price %p (%s), then it is 422 at body.limit_price', async (cmd, limit) => {
    const res = await create({
      login,
      symbol: 'EURUSD',
      cmd,
      volume: 0.1,
      trigger_price: EXAMPLES[cmd]!.trigger_price,
      limit_price: limit,
    });
    expect422(res, ['body', 'limit_price']);
  });

  test.each([6, 7])('when stop-limit cmd %i has no limit_price, then it is 422 at body.limit_price', async (cmd) => {
    expect422(await create({ login, symbol: 'EURUSD', cmd, volume: 0.1, trigger_price: EXAMPLES[cmd]!.trigger_price }), [
      'body',
      'limit_price',
    ]);
  });

  test.each([2, 3, 4, 5])('when cmd %i (not stop-limit) has a limit_price, then it is 422 at body.limit_price', async (cmd) => {
    expect422(
      await create({ login, symbol: 'EURUSD', cmd, volume: 0.1, trigger_price: EXAMPLES[cmd]!.trigger_price, limit_price: 1.1 }),
      ['body', 'limit_price'],
    );
  });

  test('when a stop-limit order has stops, then they are checked against limit_price, not trigger_price', async () => {
    // buy stop limit: trigger 1.11, limit 1.105. tp 1.108 is below the trigger but above the limit: fine.
    expectOk(
      await create({ login, symbol: 'EURUSD', cmd: 6, volume: 0.1, trigger_price: 1.11, limit_price: 1.105, tp: 1.108 }),
      201,
    );
    // sl 1.107 is below the trigger but above the limit: wrong side.
    expect422(
      await create({ login, symbol: 'EURUSD', cmd: 6, volume: 0.1, trigger_price: 1.11, limit_price: 1.105, sl: 1.107 }),
      ['body', 'sl'],
    );
    // sell stop limit: trigger 1.09, limit 1.095. tp 1.092 is above the trigger but below the limit: fine.
    expectOk(
      await create({ login, symbol: 'EURUSD', cmd: 7, volume: 0.1, trigger_price: 1.09, limit_price: 1.095, tp: 1.092 }),
      201,
    );
    expect422(
      await create({ login, symbol: 'EURUSD', cmd: 7, volume: 0.1, trigger_price: 1.09, limit_price: 1.095, sl: 1.093 }),
      ['body', 'sl'],
    );
  });

  test.each([
    [2, { sl: 1.09 }, 'sl'],
    [2, { tp: 1.085 }, 'tp'],
    [3, { sl: 1.105 }, 'sl'],
    [3, { tp: 1.115 }, 'tp'],
    [4, { sl: 1.115 }, 'sl'],
    [4, { tp: 1.11 }, 'tp'],
    [5, { sl: 1.085 }, 'sl'],
    [5, { tp: 1.095 }, 'tp'],
  ] as const)(
    'when cmd %i has stops %p on the wrong side of its trigger, then it is 422 at body.%s',
    async (cmd, stops, field) => {
      const { sl: _sl, tp: _tp, ...base } = EXAMPLES[cmd]!;
      expect422(await create({ login, symbol: 'EURUSD', cmd, volume: 0.1, ...base, ...stops }), ['body', field]);
    },
  );

  test('when cmd is a market cmd or out of range, then it is 422 literal_error at body.cmd', async () => {
    for (const cmd of [0, 1, 8]) {
      expect422(
        await create({ login, symbol: 'EURUSD', cmd, volume: 0.1, trigger_price: 1.09 }),
        ['body', 'cmd'],
        'literal_error',
      );
    }
  });

  test('when trailing_stop is 0 or negative, then it is 422 greater_than at body.trailing_stop', async () => {
    for (const trailing_stop of [0, -0.001]) {
      expect422(
        await create({ login, symbol: 'EURUSD', cmd: 2, volume: 0.1, trigger_price: 1.09, trailing_stop }),
        ['body', 'trailing_stop'],
        'greater_than',
      );
    }
  });

  test('when expiry_at is in the past, then it is 422 at body.expiry_at; in the future, then it is kept', async () => {
    expect422(
      await create({ login, symbol: 'EURUSD', cmd: 2, volume: 0.1, trigger_price: 1.09, expiry_at: '2020-01-01T00:00:00Z' }),
      ['body', 'expiry_at'],
    );
    const future = new Date(Date.now() + 86_400_000).toISOString();
    const body = expectOk(
      await create({ login, symbol: 'EURUSD', cmd: 2, volume: 0.1, trigger_price: 1.09, expiry_at: future }),
      201,
    );
    expect(new Date(body.expiry_at).getTime()).toBe(new Date(future).getTime());
  });

  test('when the symbol is unknown or has no quote, then it is 422 at body.symbol', async () => {
    expect422(await create({ login, symbol: 'NOPE', cmd: 2, volume: 0.1, trigger_price: 1.09 }), ['body', 'symbol']);
    expectOk(await app.request('DELETE', '/simulator/quotes/EURUSD', { token }), 204);
    expect422(await create({ login, symbol: 'EURUSD', cmd: 2, volume: 0.1, trigger_price: 1.09 }), ['body', 'symbol']);
  });

  test("when the login is the customer's wallet, then it is 422 at body.login", async () => {
    const wallet = expectOk(await app.request('GET', '/customers/me/accounts', { token: customer.token }), 200).items[0];
    expect(wallet.kind).toBe('wallet');
    expect422(await create({ login: wallet.login, symbol: 'EURUSD', cmd: 2, volume: 0.1, trigger_price: 1.09 }), [
      'body',
      'login',
    ]);
  });

  test('when trigger_price is missing, then it is 422 missing at body.trigger_price', async () => {
    expect422(await create({ login, symbol: 'EURUSD', cmd: 2, volume: 0.1 }), ['body', 'trigger_price'], 'missing');
  });

  test("when a customer places on its own account, then it is 201; on another customer's, then 404", async () => {
    const other = await createCustomer(app, token);
    const otherLogin = await fundedAccount(app, token, other.id, market.groupId, 100);
    expectOk(await create({ login, symbol: 'EURUSD', cmd: 2, volume: 0.1, trigger_price: 1.09 }, customer.token), 201);
    expectError(
      await create({ login: otherLogin, symbol: 'EURUSD', cmd: 2, volume: 0.1, trigger_price: 1.09 }, customer.token),
      404,
      'NOT_FOUND',
    );
  });
});

describe('listing and cancelling', () => {
  test('when orders are placed and one is cancelled, then the list is newest first and shows the cancelled status', async () => {
    const c = await createCustomer(app, token);
    const l = await fundedAccount(app, token, c.id, market.groupId, 1000);
    const a = await place(2, {}, l);
    const b = await place(5, {}, l);
    const cancelled = expectOk(await cancel(a.order, { login: l }), 200);
    expectPendingShape(cancelled);
    expect(cancelled).toMatchObject({ order: a.order, status: 'cancelled' });
    const list = expectOk(await app.request('GET', `/orders/pending?login=${l}`, { token: c.token }), 200).items;
    expect(list.map((o: { order: number; status: string }) => [o.order, o.status])).toEqual([
      [b.order, 'pending'],
      [a.order, 'cancelled'],
    ]);
    const onlyPending = expectOk(await app.request('GET', `/orders/pending?login=${l}&status=pending`, { token }), 200).items;
    expect(onlyPending.map((o: { order: number }) => o.order)).toEqual([b.order]);
  });

  test('when a cancelled order is cancelled again, then it is 409 ORDER_NOT_PENDING', async () => {
    const p = await place(3);
    expectOk(await cancel(p.order), 200);
    expectError(await cancel(p.order), 409, 'ORDER_NOT_PENDING');
  });

  test("when the login is another account's, or the caller another customer, then cancelling is 404 and the order stays pending", async () => {
    const p = await place(4);
    const sibling = await fundedAccount(app, token, customer.id, market.groupId, 0);
    const other = await createCustomer(app, token);
    expectError(await cancel(p.order, { login: sibling }), 404, 'NOT_FOUND');
    expectError(await cancel(p.order, { as: other.token }), 404, 'NOT_FOUND');
    expect((await stored(p.order)).status).toBe('pending');
    expectOk(await cancel(p.order, { as: customer.token }), 200);
  });

  test("when a customer lists another customer's pending orders, then it is 404; a missing login is 422 missing", async () => {
    const other = await createCustomer(app, token);
    expectError(await app.request('GET', `/orders/pending?login=${login}`, { token: other.token }), 404, 'NOT_FOUND');
    expect422(await app.request('GET', '/orders/pending', { token }), ['query', 'login'], 'missing');
  });

  test('when a list is longer than a page, then it comes in pages of page_size with the total, and a page_size over 200 is 422', async () => {
    const c = await createCustomer(app, token);
    const l = await fundedAccount(app, token, c.id, market.groupId, 1000);
    const placed = [];
    for (const cmd of [2, 3, 4]) placed.push((await place(cmd, {}, l)).order as number);
    const page = (n: number) => app.request('GET', `/orders/pending?login=${l}&page=${n}&page_size=2`, { token: c.token });
    const first = expectOk(await page(1), 200);
    expect(first).toMatchObject({ page: 1, page_size: 2, total: 3 });
    const second = expectOk(await page(2), 200);
    expect(second).toMatchObject({ page: 2, page_size: 2, total: 3 });
    expect([...first.items, ...second.items].map((o: { order: number }) => o.order)).toEqual(placed.reverse());
    expect(expectOk(await app.request('GET', `/orders/pending?login=${l}`, { token }), 200)).toMatchObject({
      page: 1,
      page_size: 20,
    });
    expect422(
      await app.request('GET', `/orders/pending?login=${l}&page_size=201`, { token }),
      ['query', 'page_size'],
      'less_than_equal',
    );
  });

  test('when a staff user without modify_orders cancels, then it is 403', async () => {
    const p = await place(2);
    const staff = await createStaff(app, ['open_position', 'view_orders'], token);
    expectError(await cancel(p.order, { as: staff.token }), 403, 'FORBIDDEN');
  });
});

describe('PATCH /orders/pending/{id} (endpoint 8)', () => {
  test('when only tp is sent, then only tp changes and the answer has every field', async () => {
    const p = await place(2, { trailing_stop: 0.001, comment: 'keep' });
    const body = expectOk(await patch(p.order, { tp: 1.13 }), 200);
    expectPendingShape(body);
    expect(body).toEqual({ ...p, tp: 1.13 });
    expect(await stored(p.order)).toEqual(body);
  });

  test('when sl, tp and trailing_stop are sent as null, then each is cleared and nothing else changes', async () => {
    const p = await place(3, { trailing_stop: 0.001 });
    expect(expectOk(await patch(p.order, { sl: null }), 200)).toEqual({ ...p, sl: null });
    expect(expectOk(await patch(p.order, { tp: null }), 200)).toEqual({ ...p, sl: null, tp: null });
    expect(expectOk(await patch(p.order, { trailing_stop: null }), 200)).toEqual({
      ...p,
      sl: null,
      tp: null,
      trailing_stop: null,
    });
  });

  test('when trigger_price or limit_price is sent as null, then it is 422 (only sl, tp and trailing_stop clear)', async () => {
    const p = await place(6);
    expect422(await patch(p.order, { trigger_price: null }), ['body', 'trigger_price']);
    expect422(await patch(p.order, { limit_price: null }), ['body', 'limit_price']);
    expect(await stored(p.order)).toEqual(p);
  });

  test('when the body carries fields endpoint 8 does not change, then each is 422 extra_forbidden and nothing applies', async () => {
    // Trading routes refuse unknown fields rather than drop them.
    const p = await place(2);
    const res = await patch(p.order, {
      tp: 1.13,
      volume: 5,
      symbol: 'USDJPY',
      cmd: 3,
      status: 'cancelled',
      login: 1,
      comment: 'x',
    });
    for (const field of ['volume', 'symbol', 'cmd', 'status', 'login', 'comment'])
      expect422(res, ['body', field], 'extra_forbidden');
    expect(res.body.detail).toHaveLength(6);
    expect(await stored(p.order)).toEqual(p);
  });

  test('when every field is sent at once, then all change together', async () => {
    const p = await place(6);
    const body = expectOk(
      await patch(p.order, { trigger_price: 1.12, limit_price: 1.115, sl: 1.11, tp: 1.13, trailing_stop: 0.005 }),
      200,
    );
    expect(body).toEqual({ ...p, trigger_price: 1.12, limit_price: 1.115, sl: 1.11, tp: 1.13, trailing_stop: 0.005 });
  });

  test.each([
    [2, { sl: 1.095 }, 'sl'],
    [2, { tp: 1.085 }, 'tp'],
    [2, { sl: 1.09 }, 'sl'],
    [3, { sl: 1.105 }, 'sl'],
    [3, { tp: 1.115 }, 'tp'],
    [3, { tp: 1.11 }, 'tp'],
    [4, { sl: 1.115 }, 'sl'],
    [4, { tp: 1.105 }, 'tp'],
    [5, { sl: 1.085 }, 'sl'],
    [5, { tp: 1.095 }, 'tp'],
    [6, { sl: 1.107 }, 'sl'],
    [6, { tp: 1.1 }, 'tp'],
    [7, { sl: 1.093 }, 'sl'],
    [7, { tp: 1.096 }, 'tp'],
  ] as const)(
    'when cmd %i is patched with %p on the wrong side, then it is 422 at body.%s and nothing changes',
    async (cmd, change, field) => {
      const p = await place(cmd);
      expect422(await patch(p.order, change), ['body', field]);
      expect(await stored(p.order)).toEqual(p);
    },
  );

  test.each([
    [6, { tp: 1.108 }],
    [7, { tp: 1.092 }],
    [2, { sl: 1.089, tp: 1.091 }],
    [3, { sl: 1.111, tp: 1.109 }],
  ] as const)('when cmd %i is patched with %p on the right side of its fill price, then it is 200', async (cmd, change) => {
    const p = await place(cmd);
    expect(expectOk(await patch(p.order, change), 200)).toEqual({ ...p, ...change });
  });

  test.each([
    [2, 1.1002],
    [3, 1.1],
    [4, 1.1],
    [5, 1.1001],
    [6, 1.1002],
    [7, 1.1],
  ])(
    'when cmd %i gets trigger_price %p on the wrong side of the market, then it is 422 at body.trigger_price',
    async (cmd, trigger) => {
      const p = await place(cmd, { sl: null, tp: null });
      const extra = cmd === 6 ? { limit_price: 1.09 } : cmd === 7 ? { limit_price: 1.11 } : {};
      expect422(await patch(p.order, { trigger_price: trigger, ...extra }), ['body', 'trigger_price']);
      expect((await stored(p.order)).trigger_price).toBe(p.trigger_price);
    },
  );

  test('when the market has moved, then a new trigger is checked against the current quote', async () => {
    const p = await place(2, { sl: null, tp: null }); // buy limit at 1.09
    await setQuote(app, token, 'EURUSD', 1.08, 1.0802);
    expect422(await patch(p.order, { trigger_price: 1.085 }), ['body', 'trigger_price']);
    expect(expectOk(await patch(p.order, { trigger_price: 1.075 }), 200).trigger_price).toBe(1.075);
  });

  test('when a new trigger puts the existing sl on the wrong side, then it is 422 and nothing changes', async () => {
    const p = await place(2); // trigger 1.09, sl 1.08
    const res = await patch(p.order, { trigger_price: 1.075 });
    expect(res.status).toBe(422);
    expect([
      ['body', 'sl'],
      ['body', 'trigger_price'],
    ]).toContainEqual(res.body.detail[0].loc);
    expect(await stored(p.order)).toEqual(p);
  });

  test('when a stop-limit limit_price is patched to the wrong side of its trigger, then it is 422 at body.limit_price', async () => {
    const buy = await place(6, { sl: null, tp: null }); // trigger 1.11
    expect422(await patch(buy.order, { limit_price: 1.11 }), ['body', 'limit_price']);
    expect422(await patch(buy.order, { limit_price: 1.12 }), ['body', 'limit_price']);
    // Moving the trigger below the existing limit breaks the same rule.
    expect422(await patch(buy.order, { trigger_price: 1.104 }), ['body', 'limit_price']);
    const sell = await place(7, { sl: null, tp: null }); // trigger 1.09
    expect422(await patch(sell.order, { limit_price: 1.085 }), ['body', 'limit_price']);
    expect(expectOk(await patch(sell.order, { limit_price: 1.097 }), 200).limit_price).toBe(1.097);
  });

  test.each([2, 3, 4, 5])(
    'when cmd %i (not stop-limit) is patched with a limit_price, then it is 422 at body.limit_price',
    async (cmd) => {
      const p = await place(cmd);
      expect422(await patch(p.order, { limit_price: 1.1 }), ['body', 'limit_price']);
    },
  );

  test('when trailing_stop is 0 or negative, then it is 422 greater_than at body.trailing_stop', async () => {
    const p = await place(2);
    expect422(await patch(p.order, { trailing_stop: 0 }), ['body', 'trailing_stop'], 'greater_than');
    expect422(await patch(p.order, { trailing_stop: -1 }), ['body', 'trailing_stop'], 'greater_than');
    expect(expectOk(await patch(p.order, { trailing_stop: 0.0005 }), 200).trailing_stop).toBe(0.0005);
  });

  test('when a field has the wrong type, then it is 422 float_type at that field', async () => {
    const p = await place(2);
    expect422(await patch(p.order, { sl: 'low' }), ['body', 'sl'], 'float_type');
    expect422(await patch(p.order, { tp: -1 }), ['body', 'tp'], 'greater_than_equal');
  });

  test('when the order was cancelled, then patching is 409 ORDER_NOT_PENDING', async () => {
    const p = await place(5);
    expectOk(await cancel(p.order), 200);
    expectError(await patch(p.order, { tp: 1.07 }), 409, 'ORDER_NOT_PENDING');
  });

  test("when the login is another of the same customer's accounts, then it is 404 and nothing changes", async () => {
    const p = await place(2);
    const sibling = await fundedAccount(app, token, customer.id, market.groupId, 0);
    expectError(await patch(p.order, { tp: 1.13 }, { login: sibling }), 404, 'NOT_FOUND');
    expectError(await patch(p.order, { tp: 1.13 }, { login: sibling, as: customer.token }), 404, 'NOT_FOUND');
    expect(await stored(p.order)).toEqual(p);
  });

  test('when the login query parameter is missing, then it is 422 missing at query.login', async () => {
    const p = await place(2);
    expect422(await patch(p.order, { tp: 1.13 }, { login: null }), ['query', 'login'], 'missing');
  });

  test('when the order id is unknown, a market order ticket, or not an integer, then it is 404 or 422 at path.order_id', async () => {
    const ticket = await openOrder(app, token, login, 0, 0.01);
    expectError(await patch(99999999, { tp: 1.13 }), 404, 'NOT_FOUND');
    expectError(await patch(ticket, { tp: 1.13 }), 404, 'NOT_FOUND');
    const res = await app.request('PATCH', `/orders/pending/abc?login=${login}`, { token, body: { tp: 1.13 } });
    expect422(res, ['path', 'order_id']);
  });

  test("when a customer patches its own order, then it is 200; another customer's, then 404", async () => {
    const p = await place(2);
    expect(expectOk(await patch(p.order, { tp: 1.14 }, { as: customer.token }), 200).tp).toBe(1.14);
    const other = await createCustomer(app, token);
    expectError(await patch(p.order, { tp: 1.15 }, { as: other.token }), 404, 'NOT_FOUND');
    const otherLogin = await fundedAccount(app, token, other.id, market.groupId, 0);
    expectError(await patch(p.order, { tp: 1.15 }, { as: other.token, login: otherLogin }), 404, 'NOT_FOUND');
    expect((await stored(p.order)).tp).toBe(1.14);
  });

  test('when a staff user without modify_orders patches, then it is 403; with it, then 200', async () => {
    const p = await place(2);
    const without = await createStaff(app, ['open_position', 'close_position', 'view_orders'], token);
    const withIt = await createStaff(app, ['modify_orders'], token);
    expectError(await patch(p.order, { tp: 1.13 }, { as: without.token }), 403, 'FORBIDDEN');
    expectOk(await patch(p.order, { tp: 1.13 }, { as: withIt.token }), 200);
  });

  test('when nobody is logged in, then patching is 401', async () => {
    const p = await place(2);
    const res = await app.request('PATCH', `/orders/pending/${p.order}?login=${login}`, { body: { tp: 1.13 } });
    expectError(res, 401, 'UNAUTHENTICATED');
  });
});

describe('pending_order.modified events', () => {
  test('when an order is modified twice, then two pending_order.modified rows record before and after', async () => {
    const p = await place(2);
    const first = expectOk(await patch(p.order, { tp: 1.13 }), 200);
    const second = expectOk(await patch(p.order, { sl: null }), 200);
    const events = await eventsOf(app, 'pending_order.modified', p.order);
    expect(events).toHaveLength(2);
    expect(events[0]).toMatchObject({ aggregate_type: 'pending_order', customer_id: customer.id });
    expect(events[0]!.data).toEqual({ before: p, after: first });
    expect(events[1]!.data).toEqual({ before: first, after: second });
  });

  test('when a modification is refused (422, 404, 409), then no event is written', async () => {
    const p = await place(2);
    expect422(await patch(p.order, { sl: 1.2 }), ['body', 'sl']);
    const sibling = await fundedAccount(app, token, customer.id, market.groupId, 0);
    expectError(await patch(p.order, { tp: 1.13 }, { login: sibling }), 404, 'NOT_FOUND');
    expectOk(await cancel(p.order), 200);
    expectError(await patch(p.order, { tp: 1.13 }), 409, 'ORDER_NOT_PENDING');
    expect(await eventsOf(app, 'pending_order.modified', p.order)).toEqual([]);
  });

  test('when writing the event fails, then the modification is rolled back with it (same transaction)', async () => {
    const p = await place(2);
    const fn = `fail_event_${p.order}`;
    await sql(
      app,
      `create function ${fn}() returns trigger language plpgsql as $$
         begin if new.type = 'pending_order.modified' and new.aggregate_id = '${p.order}' then
           raise exception 'injected outbox failure'; end if; return new; end $$`,
    );
    await sql(app, `create trigger ${fn} before insert on domain_events for each row execute function ${fn}()`);
    try {
      const res = await patch(p.order, { tp: 1.13 });
      expect(res.status).toBe(500);
      expect(await stored(p.order)).toEqual(p);
    } finally {
      await sql(app, `drop trigger ${fn} on domain_events`);
      await sql(app, `drop function ${fn}()`);
    }
    expect(expectOk(await patch(p.order, { tp: 1.13 }), 200).tp).toBe(1.13);
    expect(await eventsOf(app, 'pending_order.modified', p.order)).toHaveLength(1);
  });

  test('when a patch and a cancel race, then the cancel wins or follows, and there is an event only if the patch applied', async () => {
    for (let i = 0; i < 5; i++) {
      const p = await place(2);
      const [patched, cancelled] = await Promise.all([patch(p.order, { tp: 1.13 }), cancel(p.order)]);
      expect(cancelled.status).toBe(200);
      expect([200, 409]).toContain(patched.status);
      const events = await eventsOf(app, 'pending_order.modified', p.order);
      expect(events).toHaveLength(patched.status === 200 ? 1 : 0);
      expect((await stored(p.order)).status).toBe('cancelled');
    }
  });

  test('when ten patches of one order run in parallel, then each writes one event and the chain of before/after is unbroken', async () => {
    const p = await place(2, { tp: 1.2 });
    const tps = Array.from({ length: 10 }, (_, i) => Number((1.11 + i * 0.001).toFixed(3)));
    const answers = await Promise.all(tps.map((tp) => patch(p.order, { tp })));
    for (const a of answers) expectOk(a, 200);
    const events = await eventsOf(app, 'pending_order.modified', p.order);
    expect(events).toHaveLength(10);
    // Row locks serialise the patches: each event's before is some other event's after (or the original).
    const afters = new Set(events.map((e) => e.data.after.tp));
    const befores = events.map((e) => e.data.before.tp);
    expect(befores.filter((b) => b === 1.2)).toHaveLength(1);
    expect(befores.filter((b) => b !== 1.2).every((b) => afters.has(b))).toBe(true);
    expect(new Set(befores).size).toBe(10);
  });
});
