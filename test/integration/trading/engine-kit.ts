import { randomBytes } from 'node:crypto';
import { TickBook } from '../../../src/domain/engine/tick-book';
import { createCustomer } from '../../helpers/identity';
import { waitFor, type TestApp } from '../../helpers/test-app';
import { fundedAccount } from '../../helpers/trading';
import { allPages, expectOk, sql } from './trading-kit';

/** An instrument priced in USD (5 digits, 100,000 a lot) with its first quote (evaluated, unless no worker runs). */
export async function usdInstrument(
  app: TestApp,
  token: string,
  symbol: string,
  bid: number,
  ask: number,
  options: { settle?: boolean } = {},
): Promise<void> {
  const res = await app.request('POST', '/api/platform/instruments', {
    token,
    body: { symbol, digits: 5, contract_size: 100000, base_currency: symbol.slice(0, 3), quote_currency: 'USD' },
  });
  if (res.status !== 201 && res.status !== 409) throw new Error(`instrument ${symbol}: ${res.status} ${res.text}`);
  if (options.settle === false)
    expectOk(await app.request('POST', '/simulator/quotes', { token, body: { symbol, bid, ask } }), 200, `quote ${symbol}`);
  else await quote(app, token, symbol, bid, ask);
}

/** Sets a quote through the API (which signals a tick) and waits until the engine has evaluated it. */
export async function quote(
  app: TestApp,
  token: string,
  symbol: string,
  bid: number,
  ask: number,
  timeoutMs?: number,
): Promise<void> {
  expectOk(await app.request('POST', '/simulator/quotes', { token, body: { symbol, bid, ask } }), 200, `quote ${symbol}`);
  await settled(app, symbol, timeoutMs);
}

/** Waits until every recorded quote change of `symbol` has been evaluated. */
export async function settled(app: TestApp, symbol: string, timeoutMs = 15_000): Promise<void> {
  const book = new TickBook(app.runtime.services.redis, app.config.queuePrefix);
  await waitFor(
    `the engine to evaluate ${symbol}`,
    async () => {
      const s = await book.state(symbol);
      return s.ver > 0 && s.ver <= s.done;
    },
    timeoutMs,
  );
}

export async function group(app: TestApp, token: string, terms: Record<string, unknown> = {}): Promise<string> {
  const g = expectOk(
    await app.request('POST', '/groups', {
      token,
      body: { name: `E-${randomBytes(4).toString('hex')}`, default_leverage: 100, ...terms },
    }),
    201,
    'group',
  );
  return g.id as string;
}

export async function placePending(app: TestApp, token: string, body: Record<string, unknown>): Promise<number> {
  const placed = expectOk(await app.request('POST', '/orders/pending', { token, body }), 201, `pending ${JSON.stringify(body)}`);
  return placed.order as number;
}

/** Pending orders of an account by ticket. */
export async function pendingByTicket(app: TestApp, token: string, login: number): Promise<Map<number, any>> {
  const items = await allPages(app, token, `/orders/pending?login=${login}`);
  return new Map(items.map((p) => [p.order as number, p]));
}

/** Market orders of an account by ticket. */
export async function ordersByTicket(app: TestApp, token: string, login: number): Promise<Map<number, any>> {
  const items = await allPages(app, token, `/orders?login=${login}`);
  return new Map(items.map((o) => [o.order as number, o]));
}

/**
 * `accounts` funded accounts of one new customer, each with `each` buy limits at `trigger` on
 * `symbol`, inserted as createPendingOrder writes them (placing hundreds through the API
 * would take most of a test's time). Returns their tickets.
 */
export async function restingBuyLimits(
  app: TestApp,
  token: string,
  { symbol, trigger, accounts, each }: { symbol: string; trigger: number; accounts: number; each: number },
): Promise<number[]> {
  const groupId = await group(app, token);
  const customer = await createCustomer(app, token);
  const tickets: number[] = [];
  for (let a = 0; a < accounts; a++) {
    const login = await fundedAccount(app, token, customer.id, groupId, 100_000);
    const rows = await sql<{ ticket: string }>(
      app,
      `insert into pending_orders (id, created_at, updated_at, request_id, account_id, login, symbol, cmd, volume, trigger_price)
       select gen_random_uuid(), now(), now(), gen_random_uuid(), a.id, a.login, ?, 2, 0.01, ?
         from accounts a, generate_series(1, ?::int) where a.login = ?
       returning ticket`,
      [symbol, trigger, each, login],
    );
    tickets.push(...rows.map((r) => Number(r.ticket)));
  }
  return tickets;
}
