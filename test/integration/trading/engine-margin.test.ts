import { adminToken, createCustomer } from '../../helpers/identity';
import { startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount } from '../../helpers/trading';
import { group, ordersByTicket, quote, usdInstrument } from './engine-kit';
import { eventsOf, expectOk, ledgerRowsForTicket } from './trading-kit';

jest.setTimeout(90_000);

let app: TestApp;
let token: string;
let groupId: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'engine-margin' });
  token = await adminToken(app);
  groupId = await group(app, token, { margin_call_level: 100, stopout_level: 50 });
});
afterAll(() => app?.stop());

async function open(login: number, symbol: string, cmd: 0 | 1, volume: number): Promise<number> {
  const res = await app.request('POST', '/orders', { token, body: { login, symbol, cmd, volume } });
  return expectOk(res, 201, 'open').order as number;
}

test('when the margin level falls below the stop-out level, then the most losing orders close one by one until it is restored', async () => {
  await usdInstrument(app, token, 'GBPUSD', 1.1, 1.1002);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, groupId, 1000);
  const a = await open(login, 'GBPUSD', 0, 0.4); // loses most as the price falls
  const b = await open(login, 'GBPUSD', 0, 0.35);
  const c = await open(login, 'GBPUSD', 1, 0.05); // gains

  // bid 1.088: a -488, b -427, c +59: equity 144 against 870.40 of margin (16.5 %), below 50 %.
  // Closing a leaves 435.20 of margin (33 %): still below; closing b leaves 54.40 (264 %).
  await quote(app, token, 'GBPUSD', 1.088, 1.0882);
  const orders = await ordersByTicket(app, token, login);
  expect(orders.get(a)).toMatchObject({ status: 'closed', close_reason: 'stop_out', profit: '-488.00' });
  expect(orders.get(b)).toMatchObject({ status: 'closed', close_reason: 'stop_out', profit: '-427.00' });
  expect(orders.get(c).status).toBe('open');
  const closedA = await eventsOf(app, 'order.closed', a);
  const closedB = await eventsOf(app, 'order.closed', b);
  expect(closedA[0]!.data.close_reason).toBe('stop_out');
  expect(new Date(orders.get(a).closed_at).getTime()).toBeLessThanOrEqual(new Date(orders.get(b).closed_at).getTime());

  const stopOut = await eventsOf(app, 'account.stop_out', login);
  expect(stopOut).toHaveLength(1);
  expect(stopOut[0]!.data).toMatchObject({ login, closed_orders: [a, b], margin_level: '16.54', stopout_level: 50 });
  // In write order: the margin call first crossed, then the stop-out.
  const call = await eventsOf(app, 'account.margin_call', login);
  expect(call).toHaveLength(1);
  expect(closedA).toHaveLength(1);
  expect(closedB).toHaveLength(1);
  const account = expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200, 'account');
  expect(account.balance).toBe('85.00');
  await expectLedgerBalanced(app);
});

test('when the margin level crosses the margin call level, then one margin_call per crossing, and none while it stays below', async () => {
  await usdInstrument(app, token, 'AUDUSD', 1.1, 1.1002);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, groupId, 1000);
  await open(login, 'AUDUSD', 0, 0.8); // 880.16 of margin
  const calls = async () => (await eventsOf(app, 'account.margin_call', login)).length;

  await quote(app, token, 'AUDUSD', 1.098, 1.0982); // equity 824 / 878.40 = 93.8 %
  expect(await calls()).toBe(1);
  const first = (await eventsOf(app, 'account.margin_call', login))[0]!;
  expect(first.data).toMatchObject({ login, margin_level: '93.81', margin_call_level: 100, equity: '824.00' });
  await quote(app, token, 'AUDUSD', 1.0975, 1.0977); // still below: no new call
  expect(await calls()).toBe(1);
  await quote(app, token, 'AUDUSD', 1.1, 1.1002); // back above
  expect(await calls()).toBe(1);
  await quote(app, token, 'AUDUSD', 1.098, 1.0982); // crosses again
  expect(await calls()).toBe(2);
  expect(await eventsOf(app, 'account.stop_out', login)).toHaveLength(0);
  // The notifications consumer tells the customer, once per margin call.
  const told = await waitFor('two margin call notifications', async () => {
    const res = await app.request('GET', '/customers/me/notifications', { token: customer.token });
    const calls = (res.body.items as Array<{ type: string; body: string }>).filter((n) => n.type === 'account.margin_call');
    return calls.length === 2 ? calls : undefined;
  });
  expect(told[0]!.body).toContain(String(login));
  await expectLedgerBalanced(app);
});

test('when an account with a margin call closes everything by hand and opens again, then its next crossing sends a new margin_call', async () => {
  await usdInstrument(app, token, 'CHFUSD', 1.1, 1.1002);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, groupId, 1000);
  const calls = async () => (await eventsOf(app, 'account.margin_call', login)).length;
  const first = await open(login, 'CHFUSD', 0, 0.8); // 880.16 of margin
  await quote(app, token, 'CHFUSD', 1.098, 1.0982); // 93.8 %: below the call level
  expect(await calls()).toBe(1);

  // Closed by hand while below: nothing is left for the engine's margin check to look at.
  expectOk(await app.request('POST', `/orders/${first}/close`, { token }), 200, 'close');
  await quote(app, token, 'CHFUSD', 1.1, 1.1002);
  await open(login, 'CHFUSD', 0, 0.7); // the balance is 824 now: 770.14 of margin
  await quote(app, token, 'CHFUSD', 1.098, 1.0982); // 670 / 768.60 = 87.2 %: the new position crosses the call level
  expect(await calls()).toBe(2);
  await quote(app, token, 'CHFUSD', 1.0975, 1.0977); // still below: no new call
  expect(await calls()).toBe(2);
  await expectLedgerBalanced(app);
});

test('when staff close orders by hand while a stop-out closes them, then each is booked once and no request fails', async () => {
  await usdInstrument(app, token, 'NZDUSD', 1.1, 1.1002);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, groupId, 1000);
  const tickets: number[] = [];
  for (let i = 0; i < 6; i++) tickets.push(await open(login, 'NZDUSD', 0, 0.12)); // 792 of margin in all
  // Far below the stop-out level: the engine closes them all while the manual closes race it.
  const [, ...answers] = await Promise.all([
    app.request('POST', '/simulator/quotes', { token, body: { symbol: 'NZDUSD', bid: 1.03, ask: 1.0302 } }),
    ...tickets.map((t) => app.request('POST', `/orders/${t}/close`, { token })),
  ]);
  for (const a of answers) expect(a.status === 200 || (a.status === 409 && a.body.code === 'ORDER_NOT_OPEN')).toBe(true);
  await quote(app, token, 'NZDUSD', 1.03, 1.0302);
  const orders = await ordersByTicket(app, token, login);
  for (const t of tickets) {
    expect(orders.get(t).status).toBe('closed');
    expect(await ledgerRowsForTicket(app, t)).toBe(1);
    expect(await eventsOf(app, 'order.closed', t)).toHaveLength(1);
  }
  await expectLedgerBalanced(app);
});
