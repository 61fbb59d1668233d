import { adminToken, createCustomer, createStaff } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { fundedAccount } from '../../helpers/trading';
import { group, pendingByTicket, placePending, quote, usdInstrument } from './engine-kit';
import { eventsOf, expectError, expectOk, sql } from './trading-kit';

/**
 * Staff switch trading off and on: PATCH /api/crm/accounts/{login}
 * with manage_accounts, audited. Disabling cancels the waiting pending orders with reason
 * `trading_disabled`; the engine never fills an order of a disabled account, even one the
 * disabling's sweep has not reached; re-enabling lets the account trade again.
 */
jest.setTimeout(90_000);

let app: TestApp;
let admin: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'trading-switch' });
  admin = await adminToken(app);
  await usdInstrument(app, admin, 'AUDUSD', 0.65, 0.6502);
});
afterAll(() => app?.stop());

const patch = (login: number, body: unknown, token = admin) =>
  app.request('PATCH', `/api/crm/accounts/${login}`, { token, body });

test('when staff disable and re-enable trading, then pending orders are cancelled as trading_disabled, orders are refused, then accepted, all audited', async () => {
  const groupId = await group(app, admin);
  const customer = await createCustomer(app, admin);
  const login = await fundedAccount(app, admin, customer.id, groupId, 10_000);
  const base = { login, symbol: 'AUDUSD', volume: 0.1 };
  const buyLimit = await placePending(app, admin, { ...base, cmd: 2, trigger_price: 0.6 });
  const sellStop = await placePending(app, admin, { ...base, cmd: 5, trigger_price: 0.6 });

  const off = expectOk(await patch(login, { trading_disabled: true }), 200);
  expect(off).toMatchObject({ login, trading_disabled: true });
  const pending = await pendingByTicket(app, admin, login);
  for (const t of [buyLimit, sellStop])
    expect(pending.get(t)).toMatchObject({ status: 'cancelled', cancel_reason: 'trading_disabled' });
  const cancelled = await eventsOf(app, 'pending_order.cancelled');
  expect(cancelled.filter((e) => [String(buyLimit), String(sellStop)].includes(e.aggregate_id))).toHaveLength(2);
  expectError(await app.request('POST', '/orders', { token: admin, body: { ...base, cmd: 0 } }), 403, 'TRADING_DISABLED');

  const on = expectOk(await patch(login, { trading_disabled: false }), 200);
  expect(on).toMatchObject({ login, trading_disabled: false });
  expectOk(await app.request('POST', '/orders', { token: admin, body: { ...base, cmd: 0 } }), 201);
  expect(expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token: admin }), 200).trading_disabled).toBe(false);

  const audit = await sql<{ action: string; before: unknown; after: unknown }>(
    app,
    `select action, before, after from audit_entries where entity_type = 'account' and entity_id = ? and action = 'account.updated' order by created_at`,
    [String(login)],
  );
  expect(audit).toEqual([
    { action: 'account.updated', before: { trading_disabled: false }, after: { trading_disabled: true } },
    { action: 'account.updated', before: { trading_disabled: true }, after: { trading_disabled: false } },
  ]);
});

test('when an account is disabled behind the sweep, then the engine cancels its firing order as trading_disabled instead of filling it', async () => {
  const groupId = await group(app, admin);
  const customer = await createCustomer(app, admin);
  const login = await fundedAccount(app, admin, customer.id, groupId, 10_000);
  const ticket = await placePending(app, admin, { login, symbol: 'AUDUSD', volume: 0.1, cmd: 4, trigger_price: 0.66 });
  // As if the disabling committed and its sweep had not reached the order yet.
  await sql(app, 'update accounts set trading_disabled = true where login = ?', [login]);
  await quote(app, admin, 'AUDUSD', 0.6598, 0.66);
  const order = (await pendingByTicket(app, admin, login)).get(ticket);
  expect(order).toMatchObject({ status: 'cancelled', cancel_reason: 'trading_disabled', filled_order: null });
  const [{ n }] = (await sql<{ n: string }>(app, `select count(*)::text as n from orders where login = ?`, [login])) as [
    { n: string },
  ];
  expect(n).toBe('0');
  await quote(app, admin, 'AUDUSD', 0.65, 0.6502);
});

test('when the caller lacks manage_accounts, the account is unknown or the body is bad, then 403, 404 or 422 and nothing changes', async () => {
  const groupId = await group(app, admin);
  const customer = await createCustomer(app, admin);
  const login = await fundedAccount(app, admin, customer.id, groupId, 100);
  const viewer = await createStaff(app, ['view_customers'], admin);
  expectError(await patch(login, { trading_disabled: true }, viewer.token), 403, 'FORBIDDEN');
  expect((await patch(999_999_999, { trading_disabled: true })).status).toBe(404);
  expect((await patch(login, { trading_disabled: 'yes' })).status).toBe(422);
  const [row] = await sql<{ trading_disabled: boolean }>(app, 'select trading_disabled from accounts where login = ?', [login]);
  expect(row!.trading_disabled).toBe(false);
});
