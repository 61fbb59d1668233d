import type { EntityManager } from '@mikro-orm/postgresql';
import { expireDuePendingOrders } from '../../../src/domain/orders/pending-orders';
import { adminToken, createCustomer } from '../../helpers/identity';
import { startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount } from '../../helpers/trading';
import { group, ordersByTicket, pendingByTicket, placePending, quote, usdInstrument } from './engine-kit';
import { eventsOf, expectError, expectOk, sql } from './trading-kit';

jest.setTimeout(90_000);

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'engine-pending' });
  token = await adminToken(app);
});
afterAll(() => app?.stop());

/** Waits until the database's clock, which the engine and the expiry sweep go by, is past the order's expiry. */
async function pastExpiry(ticket: number): Promise<void> {
  await waitFor(`pending order ${ticket} to pass its expiry`, async () => {
    const [row] = await sql<{ past: boolean }>(app, 'select now() > expiry_at as past from pending_orders where ticket = ?', [
      ticket,
    ]);
    return row?.past;
  });
}

test('when the market walks through every kind of pending order, then each fires at its trigger, not a point before, and fills at the quote', async () => {
  await usdInstrument(app, token, 'GBPUSD', 1.1, 1.1002);
  const groupId = await group(app, token);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, groupId, 100_000);
  const base = { login, symbol: 'GBPUSD', volume: 0.1 };
  const buyStop = await placePending(app, token, { ...base, cmd: 4, trigger_price: 1.101 });
  const sellLimit = await placePending(app, token, { ...base, cmd: 3, trigger_price: 1.101 });
  const buyStopLimit = await placePending(app, token, { ...base, cmd: 6, trigger_price: 1.101, limit_price: 1.1008 });
  const buyLimit = await placePending(app, token, { ...base, cmd: 2, trigger_price: 1.099 });
  const sellStop = await placePending(app, token, { ...base, cmd: 5, trigger_price: 1.099 });
  const sellStopLimit = await placePending(app, token, { ...base, cmd: 7, trigger_price: 1.099, limit_price: 1.0992 });
  const status = async () => {
    const all = await pendingByTicket(app, token, login);
    return (t: number) => all.get(t)!;
  };

  // Just before the buy stop (ask one point below): nothing fires.
  await quote(app, token, 'GBPUSD', 1.10079, 1.10099);
  let s = await status();
  for (const t of [buyStop, sellLimit, buyStopLimit, buyLimit, sellStop, sellStopLimit]) expect(s(t).status).toBe('pending');

  // Ask at the trigger: the buy stop fills; the buy stop limit triggers and rests at 1.1008 (ask above it).
  await quote(app, token, 'GBPUSD', 1.1008, 1.101);
  s = await status();
  expect(s(buyStop).status).toBe('filled');
  expect(s(buyStop).triggered_at).not.toBeNull();
  expect(s(buyStopLimit).status).toBe('triggered');
  expect(s(buyStopLimit).filled_order).toBeNull();
  expect(s(sellLimit).status).toBe('pending');
  const orders = await ordersByTicket(app, token, login);
  const position = orders.get(s(buyStop).filled_order)!;
  expect(position).toMatchObject({ cmd: 0, open_price: 1.101, volume: 0.1, status: 'open', symbol: 'GBPUSD' });

  // Bid at the sell limit: it fills at the bid.
  await quote(app, token, 'GBPUSD', 1.101, 1.1012);
  s = await status();
  expect(s(sellLimit).status).toBe('filled');
  expect((await ordersByTicket(app, token, login)).get(s(sellLimit).filled_order)).toMatchObject({ cmd: 1, open_price: 1.101 });
  expect(s(buyStopLimit).status).toBe('triggered');

  // Ask down at the stop-limit's limit price: the resting buy limit fills there.
  await quote(app, token, 'GBPUSD', 1.1006, 1.1008);
  s = await status();
  expect(s(buyStopLimit).status).toBe('filled');
  expect((await ordersByTicket(app, token, login)).get(s(buyStopLimit).filled_order)).toMatchObject({
    cmd: 0,
    open_price: 1.1008,
  });

  // Just above the lower triggers (bid one point above the sell stop, ask one above the buy limit).
  await quote(app, token, 'GBPUSD', 1.09901, 1.0991);
  s = await status();
  for (const t of [buyLimit, sellStop, sellStopLimit]) expect(s(t).status).toBe('pending');

  // Ask at the buy limit, bid past the sell stop: both fill; the sell stop limit triggers, bid under its limit.
  await quote(app, token, 'GBPUSD', 1.0988, 1.099);
  s = await status();
  expect(s(buyLimit).status).toBe('filled');
  expect(s(sellStop).status).toBe('filled');
  expect(s(sellStopLimit).status).toBe('triggered');
  const now = await ordersByTicket(app, token, login);
  expect(now.get(s(buyLimit).filled_order)).toMatchObject({ cmd: 0, open_price: 1.099 });
  expect(now.get(s(sellStop).filled_order)).toMatchObject({ cmd: 1, open_price: 1.0988 });

  // Bid back up to the limit price: the resting sell limit fills.
  await quote(app, token, 'GBPUSD', 1.0992, 1.0994);
  s = await status();
  expect(s(sellStopLimit).status).toBe('filled');
  expect((await ordersByTicket(app, token, login)).get(s(sellStopLimit).filled_order)).toMatchObject({
    cmd: 1,
    open_price: 1.0992,
  });

  // Each fired once: one triggered and one filled event each, one market order each.
  for (const t of [buyStop, sellLimit, buyStopLimit, buyLimit, sellStop, sellStopLimit]) {
    expect(await eventsOf(app, 'pending_order.triggered', t)).toHaveLength(1);
    const filled = await eventsOf(app, 'pending_order.filled', t);
    expect(filled).toHaveLength(1);
    expect(filled[0]!.data.status).toBe('filled');
    expect(filled[0]!.data.filled_order).toBe(s(t).filled_order);
  }
  expect((await ordersByTicket(app, token, login)).size).toBe(6);
  await expectLedgerBalanced(app);
});

test('when the price gaps past a stop-limit order’s trigger and limit, then it triggers but waits for its limit; a gapped stop fills at the gap', async () => {
  await usdInstrument(app, token, 'AUDUSD', 0.7, 0.7002);
  const groupId = await group(app, token);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, groupId, 100_000);
  const base = { login, symbol: 'AUDUSD', volume: 0.1 };
  const buyStopLimit = await placePending(app, token, { ...base, cmd: 6, trigger_price: 0.701, limit_price: 0.7008 });
  const sellStopLimit = await placePending(app, token, { ...base, cmd: 7, trigger_price: 0.699, limit_price: 0.6992 });
  const sellStop = await placePending(app, token, { ...base, cmd: 5, trigger_price: 0.699 });

  await quote(app, token, 'AUDUSD', 0.705, 0.7052);
  let s = await pendingByTicket(app, token, login);
  expect(s.get(buyStopLimit).status).toBe('triggered');
  await quote(app, token, 'AUDUSD', 0.695, 0.6952);
  s = await pendingByTicket(app, token, login);
  expect(s.get(buyStopLimit).status).toBe('filled'); // ask 0.6952 is at or below its limit 0.7008
  expect(s.get(sellStopLimit).status).toBe('triggered'); // bid 0.695 is below its limit 0.6992
  expect(s.get(sellStop).status).toBe('filled');
  const orders = await ordersByTicket(app, token, login);
  expect(orders.get(s.get(sellStop).filled_order).open_price).toBe(0.695);
  expect(orders.get(s.get(buyStopLimit).filled_order).open_price).toBe(0.6952);
  await quote(app, token, 'AUDUSD', 0.6993, 0.6995);
  s = await pendingByTicket(app, token, login);
  expect(s.get(sellStopLimit).status).toBe('filled');
  expect((await ordersByTicket(app, token, login)).get(s.get(sellStopLimit).filled_order).open_price).toBe(0.6993);
  await expectLedgerBalanced(app);
});

test('when a stop-limit order has triggered, then its owner can cancel it (not modify it), and the engine no longer fills it', async () => {
  await usdInstrument(app, token, 'DKKUSD', 0.15, 0.1502);
  const groupId = await group(app, token);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, groupId, 100_000);
  const ticket = await placePending(app, token, {
    login,
    symbol: 'DKKUSD',
    cmd: 6,
    volume: 0.1,
    trigger_price: 0.151,
    limit_price: 0.1508,
  });
  await quote(app, token, 'DKKUSD', 0.1509, 0.1511); // ask past the trigger, above the limit: rests
  expect((await pendingByTicket(app, token, login)).get(ticket).status).toBe('triggered');

  const patched = await app.request('PATCH', `/orders/pending/${ticket}?login=${login}`, {
    token: customer.token,
    body: { tp: 0.16 },
  });
  expectError(patched, 409, 'ORDER_NOT_PENDING');
  const cancelled = expectOk(
    await app.request('DELETE', `/orders/pending/${ticket}?login=${login}`, { token: customer.token }),
    200,
    'cancel',
  );
  expect(cancelled).toMatchObject({ order: ticket, status: 'cancelled', filled_order: null });
  expect(cancelled.triggered_at).not.toBeNull();
  expect(await eventsOf(app, 'pending_order.cancelled', ticket)).toHaveLength(1);
  expectError(await app.request('DELETE', `/orders/pending/${ticket}?login=${login}`, { token }), 409, 'ORDER_NOT_PENDING');

  await quote(app, token, 'DKKUSD', 0.1506, 0.1508); // ask at the limit: it would have filled
  expect((await pendingByTicket(app, token, login)).get(ticket).status).toBe('cancelled');
  expect((await ordersByTicket(app, token, login)).size).toBe(0);
  await expectLedgerBalanced(app);
});

test('when a fill fails the margin check, then the pending order is cancelled with the reason and nothing opens', async () => {
  await usdInstrument(app, token, 'NZDUSD', 0.6, 0.6002);
  const groupId = await group(app, token);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, groupId, 100);
  // 10 lots need 6,000 of margin; the account holds 100.
  const ticket = await placePending(app, token, { login, symbol: 'NZDUSD', cmd: 2, volume: 10, trigger_price: 0.599 });
  await quote(app, token, 'NZDUSD', 0.5988, 0.599);
  const p = (await pendingByTicket(app, token, login)).get(ticket);
  expect(p.status).toBe('cancelled');
  expect(p.cancel_reason).toMatch(/free margin/);
  expect(p.filled_order).toBeNull();
  expect((await ordersByTicket(app, token, login)).size).toBe(0);
  const cancelled = await eventsOf(app, 'pending_order.cancelled', ticket);
  expect(cancelled).toHaveLength(1);
  expect(cancelled[0]!.data.cancel_reason).toBe(p.cancel_reason);
  await expectLedgerBalanced(app);
});

test('when an order has expired, then a later tick that reaches its trigger does not fill it', async () => {
  await usdInstrument(app, token, 'CHFUSD', 1.1, 1.1002);
  const groupId = await group(app, token);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, groupId, 100_000);
  const ticket = await placePending(app, token, {
    login,
    symbol: 'CHFUSD',
    cmd: 2,
    volume: 0.1,
    trigger_price: 1.099,
    expiry_at: new Date(Date.now() + 1000).toISOString(),
  });
  await pastExpiry(ticket);
  await quote(app, token, 'CHFUSD', 1.0988, 1.099);
  const p = (await pendingByTicket(app, token, login)).get(ticket);
  expect(['pending', 'expired']).toContain(p.status);
  expect(p.filled_order).toBeNull();
  expect((await ordersByTicket(app, token, login)).size).toBe(0);
  await expectLedgerBalanced(app);
});

test('when a triggered stop-limit order passes its expiry, then the expiry sweep expires it and a later tick does not fill it', async () => {
  await usdInstrument(app, token, 'NZDUSD', 0.6, 0.6002);
  const groupId = await group(app, token);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, groupId, 100_000);
  const ticket = await placePending(app, token, {
    login,
    symbol: 'NZDUSD',
    cmd: 6,
    volume: 0.1,
    trigger_price: 0.601,
    limit_price: 0.6008,
    expiry_at: new Date(Date.now() + 1500).toISOString(),
  });
  await quote(app, token, 'NZDUSD', 0.605, 0.6052);
  expect((await pendingByTicket(app, token, login)).get(ticket).status).toBe('triggered');
  await pastExpiry(ticket);
  await expireDuePendingOrders(app.runtime.services.orm.em.fork() as EntityManager);
  await quote(app, token, 'NZDUSD', 0.5998, 0.6);
  const p = (await pendingByTicket(app, token, login)).get(ticket);
  expect(p.status).toBe('expired');
  expect(p.filled_order).toBeNull();
  expect(await eventsOf(app, 'pending_order.expired', ticket)).toHaveLength(1);
  await expectLedgerBalanced(app);
});

test('when a group widens the spread, then its accounts trigger at their own quote, not the raw one', async () => {
  await usdInstrument(app, token, 'CADUSD', 0.7, 0.7002);
  const groupId = await group(app, token);
  // 20 points: each side moves 10 points (0.0001) from the raw quote.
  const row = await app.request('PUT', `/groups/${groupId}/instruments/CADUSD`, {
    token,
    body: { enabled: true, spread: 20, swap_long: 0, swap_short: 0 },
  });
  expect(row.status).toBe(201);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, groupId, 100_000);
  const ticket = await placePending(app, token, { login, symbol: 'CADUSD', cmd: 4, volume: 0.1, trigger_price: 0.701 });
  // Raw ask 0.7009 is below the trigger, but the account's ask is 0.701: it fires, filling at 0.701.
  await quote(app, token, 'CADUSD', 0.7007, 0.7009);
  const p = (await pendingByTicket(app, token, login)).get(ticket);
  expect(p.status).toBe('filled');
  expect((await ordersByTicket(app, token, login)).get(p.filled_order).open_price).toBe(0.701);
  await expectLedgerBalanced(app);
});

// Each cmd on a symbol of its own at 1.1000 / 1.1002: its trigger 10 points away on its side;
// the quote moves so that the watched side (ask for buys, bid for sells) sits a point before
// the trigger, then at it; a twin order placed beside it then sees the side jump a point past.
const KINDS: Array<[number, string, 'ask' | 'bid', number, number | undefined]> = [
  [2, 'buy limit', 'ask', 1.0992, undefined],
  [3, 'sell limit', 'bid', 1.101, undefined],
  [4, 'buy stop', 'ask', 1.1012, undefined],
  [5, 'sell stop', 'bid', 1.099, undefined],
  [6, 'buy stop limit', 'ask', 1.1012, 1.1005],
  [7, 'sell stop limit', 'bid', 1.099, 1.0995],
];
test.each(KINDS)(
  'when cmd %i (%s, against the %s) reaches its trigger, then it fires at it and past it, never a point before',
  async (cmd, _name, side, trigger, limit) => {
    const symbol = `K${'ABCDEFGH'[cmd]}XUSD`;
    await usdInstrument(app, token, symbol, 1.1, 1.1002);
    const groupId = await group(app, token);
    const customer = await createCustomer(app, token);
    const login = await fundedAccount(app, token, customer.id, groupId, 100_000);
    const body = { login, symbol, cmd, volume: 0.1, trigger_price: trigger, ...(limit ? { limit_price: limit } : {}) };
    const first = await placePending(app, token, body);
    const rising = trigger > 1.1;
    const at = (price: number) =>
      side === 'ask' ? [Number((price - 0.0002).toFixed(5)), price] : [price, Number((price + 0.0002).toFixed(5))];
    const point = rising ? -0.00001 : 0.00001;
    const [bid1, ask1] = at(Number((trigger + point).toFixed(5)));
    await quote(app, token, symbol, bid1!, ask1!);
    expect((await pendingByTicket(app, token, login)).get(first).status).toBe('pending');
    const fired = limit ? 'triggered' : 'filled';
    const [bid2, ask2] = at(trigger);
    await quote(app, token, symbol, bid2!, ask2!);
    expect((await pendingByTicket(app, token, login)).get(first).status).toBe(fired);
    // Back where it started, a twin waits; the side then jumps a point past the trigger.
    await quote(app, token, symbol, 1.1, 1.1002);
    const twin = await placePending(app, token, body);
    const [bid3, ask3] = at(Number((trigger - point).toFixed(5)));
    await quote(app, token, symbol, bid3!, ask3!);
    expect((await pendingByTicket(app, token, login)).get(twin).status).toBe(fired);
    await expectLedgerBalanced(app);
  },
);

test('when the random walk moves a quote, then its ticks are evaluated too: an order a point from the market fills', async () => {
  await usdInstrument(app, token, 'SEKUSD', 1.1, 1.1002);
  const groupId = await group(app, token);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, groupId, 100_000);
  // A point below the ask and a point above the bid: any step of the walk reaches one of them.
  const buyLimit = await placePending(app, token, { login, symbol: 'SEKUSD', cmd: 2, volume: 0.1, trigger_price: 1.10019 });
  const sellLimit = await placePending(app, token, { login, symbol: 'SEKUSD', cmd: 3, volume: 0.1, trigger_price: 1.10001 });
  const walk = await app.request('PUT', '/simulator/random-walk', {
    token,
    body: { enabled: true, symbols: ['SEKUSD'], interval_ms: 250, volatility_bps: 50 },
  });
  expect(walk.status).toBe(200);
  try {
    const filled = await waitFor('a fill driven by the random walk', async () => {
      const all = await pendingByTicket(app, token, login);
      return [buyLimit, sellLimit].map((t) => all.get(t)).find((p) => p.status === 'filled');
    });
    // The fill opened a position of the pending order's side and size, no worse than its limit.
    const buy = filled.order === buyLimit;
    const position = (await ordersByTicket(app, token, login)).get(filled.filled_order);
    expect(position).toMatchObject({ symbol: 'SEKUSD', cmd: buy ? 0 : 1, volume: 0.1, status: 'open' });
    if (buy) expect(position.open_price).toBeLessThanOrEqual(1.10019);
    else expect(position.open_price).toBeGreaterThanOrEqual(1.10001);
  } finally {
    await app.request('PUT', '/simulator/random-walk', { token, body: { enabled: false } });
  }
  await expectLedgerBalanced(app);
});

test('when a burst of quote changes arrives for one symbol, then it is coalesced to fewer passes and the latest price still fills what it reaches', async () => {
  await usdInstrument(app, token, 'NOKUSD', 1.1, 1.1002);
  const groupId = await group(app, token);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, groupId, 100_000);
  const ticket = await placePending(app, token, { login, symbol: 'NOKUSD', cmd: 2, volume: 0.1, trigger_price: 1.09 });
  const changes = 40;
  const sends: Array<Promise<unknown>> = [];
  for (let i = 0; i < changes; i++) {
    const bid = i === changes - 1 ? 1.0898 : 1.1 + (i % 2) * 0.0001;
    sends.push(
      app.request('POST', '/simulator/quotes', {
        token,
        body: { symbol: 'NOKUSD', bid, ask: Number((bid + 0.0002).toFixed(5)) },
      }),
    );
  }
  // Sent in order on separate connections: only the last answered one is known to be the latest.
  const answers = (await Promise.all(sends)) as Array<{ status: number }>;
  expect(answers.every((a) => a.status === 200)).toBe(true);
  await quote(app, token, 'NOKUSD', 1.0898, 1.09);
  expect((await pendingByTicket(app, token, login)).get(ticket).status).toBe('filled');
  const jobs = await app.runtime.services.jobs.queue('engine').getCompleted(0, 1000);
  const passes = jobs
    .filter((j) => j.name === 'engine-tick' && j.data.symbol === 'NOKUSD')
    .reduce((n, j) => n + ((j.returnvalue as { passes?: number })?.passes ?? 0), 0);
  expect(passes).toBeGreaterThan(0);
  // 41 quote changes in all took 4 or 5 passes in the runs seen; never one pass per change.
  expect(passes).toBeLessThanOrEqual(changes / 2);
  await expectLedgerBalanced(app);
});
