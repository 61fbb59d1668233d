import type { EntityManager } from '@mikro-orm/postgresql';
import { decidePendingOrder } from '../../../src/domain/engine/pending-fill';
import { QuoteStore, type Quote } from '../../../src/domain/prices/quote-store';
import { adminToken, createCustomer } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount } from '../../helpers/trading';
import { group, ordersByTicket, pendingByTicket, placePending, usdInstrument } from './engine-kit';
import { eventsOf, expectOk } from './trading-kit';

jest.setTimeout(90_000);

// The API tier alone: no engine worker evaluates the quotes this test sets; it decides the
// pending orders itself, at the moments it chooses.
let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'limit-price', env: { ROLE: 'api' } });
  token = await adminToken(app);
  await usdInstrument(app, token, 'AUDUSD', 1.1, 1.1002, { settle: false });
  await usdInstrument(app, token, 'NZDUSD', 0.6, 0.6002, { settle: false });
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

const setQuote = async (symbol: string, bid: number, ask: number) =>
  expectOk(await app.request('POST', '/simulator/quotes', { token, body: { symbol, bid, ask } }), 200, `quote ${symbol}`);

/**
 * The real quote store, through which the market moves at the worst moment: right after the
 * decision has read the quote that fires the order, `meanwhile` runs (a position opened on
 * another symbol, so the fill must price the account again, and the quote moved away).
 */
class MarketMovesAfterFirstRead extends QuoteStore {
  private moved = false;
  constructor(
    private readonly symbol: string,
    private readonly meanwhile: () => Promise<void>,
  ) {
    super(app.runtime.services.redis, app.config.queuePrefix);
  }

  override async getMany(symbols: string[]): Promise<Map<string, Quote>> {
    const read = await super.getMany(symbols);
    if (!this.moved && symbols.includes(this.symbol)) {
      this.moved = true;
      await this.meanwhile();
    }
    return read;
  }
}

const decide = (ticket: number, quotes: QuoteStore = app.runtime.services.quotes) =>
  decidePendingOrder(app.runtime.services.orm.em.fork() as EntityManager, quotes, String(ticket));

async function accountWithLimit(body: Record<string, unknown>): Promise<{ login: number; ticket: number }> {
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, await group(app, token), 10_000);
  const ticket = await placePending(app, token, { login, symbol: 'AUDUSD', volume: 0.1, ...body });
  return { login, ticket };
}

test('when the market moves away from a buy limit between its trigger and its fill, then it keeps resting, and fills at or better than its limit later', async () => {
  await setQuote('AUDUSD', 1.1, 1.1002);
  const { login, ticket } = await accountWithLimit({ cmd: 2, trigger_price: 1.099 });
  await setQuote('AUDUSD', 1.0985, 1.0987); // ask 1.0987 <= 1.099: fires
  const moving = new MarketMovesAfterFirstRead('AUDUSD', async () => {
    expectOk(
      await app.request('POST', '/orders', { token, body: { login, symbol: 'NZDUSD', cmd: 0, volume: 0.01 } }),
      201,
      'a position on another symbol',
    );
    await setQuote('AUDUSD', 1.0995, 1.0997); // ask 1.0997 is worse than the limit 1.099
  });

  expect(await decide(ticket, moving)).toBe('waiting');
  const resting = (await pendingByTicket(app, token, login)).get(ticket);
  expect(resting).toMatchObject({ status: 'pending', triggered_at: null, filled_order: null });
  expect(await eventsOf(app, 'pending_order.triggered', ticket)).toHaveLength(0);
  const orders = [...(await ordersByTicket(app, token, login)).values()];
  expect(orders.map((o) => o.symbol)).toEqual(['NZDUSD']);

  // The market comes back: it fills, at a price no worse than its limit.
  await setQuote('AUDUSD', 1.0986, 1.0988);
  expect(await decide(ticket)).toBe('filled');
  const filled = (await pendingByTicket(app, token, login)).get(ticket);
  expect(filled.status).toBe('filled');
  const order = (await ordersByTicket(app, token, login)).get(filled.filled_order);
  expect(order.open_price).toBe(1.0988);
});

test("when the market moves away from a triggered stop-limit's limit before its fill, then it stays triggered and resting", async () => {
  await setQuote('AUDUSD', 1.1, 1.1002);
  const { login, ticket } = await accountWithLimit({ cmd: 6, trigger_price: 1.101, limit_price: 1.1005 });
  await setQuote('AUDUSD', 1.1008, 1.101); // ask reaches the trigger: it rests at its limit
  expect(await decide(ticket)).toBe('triggered');
  await setQuote('AUDUSD', 1.1002, 1.1004); // ask 1.1004 <= 1.1005: the limit fires
  const moving = new MarketMovesAfterFirstRead('AUDUSD', async () => {
    expectOk(
      await app.request('POST', '/orders', { token, body: { login, symbol: 'NZDUSD', cmd: 0, volume: 0.01 } }),
      201,
      'a position on another symbol',
    );
    await setQuote('AUDUSD', 1.1006, 1.1008);
  });
  expect(await decide(ticket, moving)).toBe('waiting');
  expect((await pendingByTicket(app, token, login)).get(ticket)).toMatchObject({ status: 'triggered', filled_order: null });
  await setQuote('AUDUSD', 1.1, 1.1002);
  expect(await decide(ticket)).toBe('filled');
  const filled = (await pendingByTicket(app, token, login)).get(ticket);
  expect((await ordersByTicket(app, token, login)).get(filled.filled_order).open_price).toBe(1.1002);
});
