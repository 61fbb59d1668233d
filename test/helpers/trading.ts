import { randomBytes } from 'node:crypto';
import { findLedgerMismatches } from '../../src/domain/ledger/ledger';
import type { TestApp } from './test-app';

async function ok<T = any>(res: { status: number; body: T }, status: number, what: string): Promise<T> {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export interface Market {
  groupId: string;
}

/** An active group trading EURUSD (5 digits) and USDJPY (3 digits), both quoted. */
/** A group and EURUSD, USDJPY (and, with `gbp`, GBPUSD at 1.25 / 1.2503) quoted. */
export async function setUpMarket(
  app: TestApp,
  token: string,
  options: { leverage?: number; gbp?: boolean } = {},
): Promise<Market> {
  const group = await ok(
    await app.request('POST', '/groups', {
      token,
      body: { name: `G-${randomBytes(4).toString('hex')}`, default_leverage: options.leverage ?? 100 },
    }),
    201,
    'create group',
  );
  for (const [symbol, digits, base, quote] of [
    ['EURUSD', 5, 'EUR', 'USD'],
    ['USDJPY', 3, 'USD', 'JPY'],
    ...(options.gbp ? ([['GBPUSD', 5, 'GBP', 'USD']] as const) : []),
  ] as const) {
    const res = await app.request('POST', '/api/platform/instruments', {
      token,
      body: { symbol, digits, contract_size: 100000, base_currency: base, quote_currency: quote },
    });
    if (res.status !== 201 && res.status !== 409) throw new Error(`instrument: ${res.status}`);
  }
  await setQuote(app, token, 'EURUSD', 1.1, 1.1002);
  await setQuote(app, token, 'USDJPY', 150, 150.02);
  if (options.gbp) await setQuote(app, token, 'GBPUSD', 1.25, 1.2503);
  return { groupId: (group as { id: string }).id };
}

export async function setQuote(app: TestApp, token: string, symbol: string, bid: number, ask: number): Promise<void> {
  await ok(await app.request('POST', '/simulator/quotes', { token, body: { symbol, bid, ask } }), 200, `quote ${symbol}`);
}

/** A live account of `customerId` in the group, funded with `deposit` USD. */
export async function fundedAccount(
  app: TestApp,
  token: string,
  customerId: string,
  groupId: string,
  deposit = 10_000,
): Promise<number> {
  const account = await ok(
    await app.request('POST', `/api/crm/customers/${customerId}/accounts`, { token, body: { kind: 'live', group_id: groupId } }),
    201,
    'open account',
  );
  const login = (account as { login: number }).login;
  if (deposit > 0)
    await ok(
      await app.request('POST', `/api/backoffice/accounts/${login}/deposits`, { token, body: { amount: deposit } }),
      201,
      'deposit',
    );
  return login;
}

export async function openOrder(
  app: TestApp,
  token: string,
  login: number,
  cmd: 0 | 1 = 0,
  volume = 0.01,
  symbol = 'EURUSD',
): Promise<number> {
  const order = await ok(
    await app.request('POST', '/orders', { token, body: { login, symbol, cmd, volume } }),
    201,
    'open order',
  );
  return (order as { order: number }).order;
}

/** The ledger invariant: every balance equals the sum of its ledger rows. */
export async function expectLedgerBalanced(app: TestApp): Promise<void> {
  const mismatches = await findLedgerMismatches(app.runtime.services.orm.em.fork());
  if (mismatches.length) throw new Error(`ledger out of balance: ${JSON.stringify(mismatches)}`);
}
