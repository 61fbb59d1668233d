import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, openOrder, setQuote, setUpMarket } from '../../helpers/trading';
import { walletOf } from '../money/money-kit';
import { expect422, expectOk, sql } from './trading-kit';

/**
 * Trading and money routes refuse unknown body fields. Before, a
 * mistyped `stop_loss` (the field is `sl`) was dropped and the order opened without its
 * stop. Each route below gets a typo and must answer 422 extra_forbidden at that field,
 * leaving every trading and money table as it was.
 */
let app: TestApp;
let admin: string;
let customer: LoggedIn;
let login: number;
let wallet: number;
let prop: number;
let ticket: number;
let pendingId: number;
let withdrawalId: string;
let payoutId: string;

const TABLES = [
  'accounts',
  'orders',
  'pending_orders',
  'ledger_entries',
  'transfers',
  'withdrawals',
  'payouts',
  'bulk_close_runs',
];

/** Every row of the tables a trading or money request can change, as one digest per table. */
async function state(): Promise<Record<string, string>> {
  const digests: Record<string, string> = {};
  for (const table of TABLES) {
    const [row] = await sql<{ digest: string | null }>(
      app,
      `select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest from ${table} t`,
    );
    digests[table] = row!.digest ?? '';
  }
  return digests;
}

beforeAll(async () => {
  app = await startTestApp({ label: 'unknownfields', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  const market = await setUpMarket(app, admin);
  customer = await createCustomer(app, admin);
  login = await fundedAccount(app, admin, customer.id, market.groupId, 10_000);
  wallet = await walletOf(app, customer);
  expectOk(
    await app.request('POST', `/api/backoffice/accounts/${wallet}/deposits`, { token: admin, body: { amount: 500 } }),
    201,
  );
  ticket = await openOrder(app, customer.token, login);
  pendingId = expectOk(
    await app.request('POST', '/orders/pending', {
      token: customer.token,
      body: { login, symbol: 'EURUSD', cmd: 2, volume: 0.01, trigger_price: 1.09, sl: 1.08, tp: 1.12 },
    }),
    201,
  ).order;
  withdrawalId = expectOk(
    await app.request('POST', '/customers/me/withdraw', {
      token: customer.token,
      body: { amount: 10, payment_data: { iban: 'DE89370400440532013000' } },
    }),
    202,
  ).transaction_id;
  // A prop account with a profit, so a payout can be pending.
  prop = expectOk(
    await app.request('POST', `/api/crm/customers/${customer.id}/accounts`, {
      token: admin,
      body: { kind: 'prop', group_id: market.groupId },
    }),
    201,
  ).login;
  expectOk(
    await app.request('POST', `/api/backoffice/accounts/${prop}/deposits`, { token: admin, body: { amount: 10_000 } }),
    201,
  );
  const won = await openOrder(app, customer.token, prop, 0, 1);
  await setQuote(app, admin, 'EURUSD', 1.12, 1.1202);
  expectOk(await app.request('POST', `/orders/${won}/close`, { token: customer.token }), 200);
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
  payoutId = expectOk(
    await app.request('POST', '/prop/payouts', { token: customer.token, body: { login: prop, amount: 10 } }),
    201,
  ).id;
}, 60_000);
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

interface Typo {
  method: string;
  path: () => string;
  staff?: boolean;
  body: () => Record<string, unknown>;
  field: string;
}

const TYPOS: Record<string, Typo> = {
  'POST /orders (stop_loss for sl)': {
    method: 'POST',
    path: () => '/orders',
    body: () => ({ login, symbol: 'EURUSD', cmd: 0, volume: 0.01, stop_loss: 1.09 }),
    field: 'stop_loss',
  },
  'POST /orders/pending (take_profit for tp)': {
    method: 'POST',
    path: () => '/orders/pending',
    body: () => ({ login, symbol: 'EURUSD', cmd: 2, volume: 0.01, trigger_price: 1.09, take_profit: 1.12 }),
    field: 'take_profit',
  },
  'PATCH /orders/pending/{order_id} (stop_loss for sl)': {
    method: 'PATCH',
    path: () => `/orders/pending/${pendingId}?login=${login}`,
    body: () => ({ tp: 1.13, stop_loss: 1.07 }),
    field: 'stop_loss',
  },
  'POST /orders/{ticket}/close (a volume, as if it closed a part)': {
    method: 'POST',
    path: () => `/orders/${ticket}/close`,
    body: () => ({ volume: 0.005 }),
    field: 'volume',
  },
  'POST /orders/bulk-close (symbol, as if it closed one symbol)': {
    method: 'POST',
    path: () => '/orders/bulk-close',
    staff: true,
    body: () => ({ login, symbol: 'EURUSD' }),
    field: 'symbol',
  },
  'POST /customers/me/transfer (currency)': {
    method: 'POST',
    path: () => '/customers/me/transfer',
    body: () => ({ from_login: wallet, to_login: login, amount: 5, currency: 'EUR' }),
    field: 'currency',
  },
  'POST /customers/me/withdraw (ammount)': {
    method: 'POST',
    path: () => '/customers/me/withdraw',
    body: () => ({ amount: 5, ammount: 50, payment_data: { iban: 'DE89370400440532013000' } }),
    field: 'ammount',
  },
  'POST /api/backoffice/accounts/{login}/deposits (currency)': {
    method: 'POST',
    path: () => `/api/backoffice/accounts/${login}/deposits`,
    staff: true,
    body: () => ({ amount: 5, currency: 'EUR' }),
    field: 'currency',
  },
  'POST /api/backoffice/withdrawals/{id}/approve (amount)': {
    method: 'POST',
    path: () => `/api/backoffice/withdrawals/${withdrawalId}/approve`,
    staff: true,
    body: () => ({ amount: 5 }),
    field: 'amount',
  },
  'POST /api/backoffice/withdrawals/{id}/reject (notify)': {
    method: 'POST',
    path: () => `/api/backoffice/withdrawals/${withdrawalId}/reject`,
    staff: true,
    body: () => ({ reason: 'Details do not match', notify: false }),
    field: 'notify',
  },
  'POST /prop/payouts (currency)': {
    method: 'POST',
    path: () => '/prop/payouts',
    body: () => ({ login: prop, amount: 5, currency: 'EUR' }),
    field: 'currency',
  },
  'POST /prop/payouts/{id}/approve (amount)': {
    method: 'POST',
    path: () => `/prop/payouts/${payoutId}/approve`,
    staff: true,
    body: () => ({ amount: 1 }),
    field: 'amount',
  },
  'POST /prop/payouts/{id}/reject (notify)': {
    method: 'POST',
    path: () => `/prop/payouts/${payoutId}/reject`,
    staff: true,
    body: () => ({ reason: 'Broke the consistency rule', notify: false }),
    field: 'notify',
  },
};

test.each(Object.entries(TYPOS))(
  'when %s comes with an unknown field, then 422 extra_forbidden there and nothing changes',
  async (_name, typo) => {
    const before = await state();
    const res = await app.request(typo.method, typo.path(), { token: typo.staff ? admin : customer.token, body: typo.body() });
    expect422(res, ['body', typo.field], 'extra_forbidden');
    expect(res.body.detail).toHaveLength(1);
    expect(await state()).toEqual(before);
  },
);

test('when the same order comes with sl spelled right, then it opens with its stop (the typo was the only fault)', async () => {
  const opened = expectOk(
    await app.request('POST', '/orders', {
      token: customer.token,
      body: { login, symbol: 'EURUSD', cmd: 0, volume: 0.01, sl: 1.09 },
    }),
    201,
  );
  expect(opened.sl).toBe(1.09);
});

test('when a route outside trading and money gets an unknown field, then it is still ignored (groups)', async () => {
  const res = await app.request('POST', '/groups', { token: admin, body: { name: `ignored-${Date.now()}`, colour: 'red' } });
  expect(res.status).toBe(201);
  expect(res.body).not.toHaveProperty('colour');
});
