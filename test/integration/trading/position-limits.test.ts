import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount } from '../../helpers/trading';
import { group, ordersByTicket, pendingByTicket, placePending, quote, usdInstrument } from './engine-kit';
import { expect422, expectError, expectOk } from './trading-kit';

jest.setTimeout(120_000);

let app: TestApp;
let token: string;
let customer: LoggedIn;

beforeAll(async () => {
  app = await startTestApp({ label: 'position-limits' });
  token = await adminToken(app);
  customer = await createCustomer(app, token);
  // Mid 1.1001: 0.1 lots (10,000 units) are 11,001 USD of exposure.
  await usdInstrument(app, token, 'AUDUSD', 1.1, 1.1002);
  await usdInstrument(app, token, 'NZDUSD', 0.6, 0.6002);
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

async function limitedGroup(terms: Record<string, unknown>): Promise<string> {
  const groupId = await group(app, token);
  expectOk(await app.request('PATCH', `/groups/${groupId}`, { token, body: terms }), 200, 'limits');
  return groupId;
}

const open = (login: number, cmd: 0 | 1, volume: number, symbol = 'AUDUSD') =>
  app.request('POST', '/orders', { token, body: { login, symbol, cmd, volume } });

describe('max_open_positions', () => {
  test('when 20 orders open in parallel against a limit of 5, then exactly 5 open and 15 are 409 TOO_MANY_POSITIONS', async () => {
    const groupId = await limitedGroup({ max_open_positions: 5 });
    const login = await fundedAccount(app, token, customer.id, groupId, 100_000);
    const answers = await Promise.all(Array.from({ length: 20 }, () => open(login, 0, 0.01)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(5);
    const refused = answers.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(15);
    for (const r of refused) expectError(r, 409, 'TOO_MANY_POSITIONS');
    const orders = [...(await ordersByTicket(app, token, login)).values()];
    expect(orders.filter((o) => o.status === 'open')).toHaveLength(5);

    // Closing is never refused; it makes room for one more.
    expectOk(await app.request('POST', `/orders/${orders[0].order}/close`, { token }), 200, 'close');
    expectOk(await open(login, 1, 0.01), 201, 'one more');
    expectError(await open(login, 1, 0.01), 409, 'TOO_MANY_POSITIONS');
  });

  test('when pending orders rest, then they do not count; one that fills past the limit is cancelled with the reason', async () => {
    const groupId = await limitedGroup({ max_open_positions: 1 });
    const login = await fundedAccount(app, token, customer.id, groupId, 100_000);
    // Placing pending orders is not limited by open positions.
    const limit = await placePending(app, token, { login, symbol: 'NZDUSD', cmd: 2, volume: 0.01, trigger_price: 0.599 });
    expectOk(await open(login, 0, 0.01), 201, 'the one position');
    await quote(app, token, 'NZDUSD', 0.5985, 0.5987);
    const pending = (await pendingByTicket(app, token, login)).get(limit);
    expect(pending.status).toBe('cancelled');
    expect(pending.cancel_reason).toMatch(/most its group allows \(1\)/);
    await quote(app, token, 'NZDUSD', 0.6, 0.6002);
  });
});

describe('max_exposure', () => {
  test('when gross, then long and short both count and an open past the limit is 422 at volume', async () => {
    const groupId = await limitedGroup({ max_exposure: 50_000, net_max_exposure: false });
    const a = await fundedAccount(app, token, customer.id, groupId, 100_000);
    const b = await fundedAccount(app, token, customer.id, groupId, 100_000);
    expectOk(await open(a, 0, 0.2), 201, 'a buys 22,002');
    expectOk(await open(b, 1, 0.2), 201, 'b sells 22,002');
    // 44,004 + 11,001 = 55,005 > 50,000, whoever opens it and in whichever direction.
    expect422(await open(b, 0, 0.1), ['body', 'volume']);
    expect422(await open(a, 1, 0.1), ['body', 'volume']);
    // NZDUSD counts too: 0.05 lots at mid 0.6001 = 3,000.50 fits; 0.1 = 6,001 does not.
    expect422(await open(a, 0, 0.1, 'NZDUSD'), ['body', 'volume']);
    expectOk(await open(a, 0, 0.05, 'NZDUSD'), 201, 'NZDUSD within the limit');
  });

  test('when net, then a symbol counts |long - short| and a hedge is never refused', async () => {
    const groupId = await limitedGroup({ max_exposure: 50_000, net_max_exposure: true });
    const a = await fundedAccount(app, token, customer.id, groupId, 100_000);
    const b = await fundedAccount(app, token, customer.id, groupId, 100_000);
    expectOk(await open(a, 0, 0.2), 201, 'a buys');
    expectOk(await open(b, 1, 0.2), 201, 'b sells: net 0');
    expectOk(await open(a, 0, 0.4), 201, 'net 44,004');
    expect422(await open(b, 0, 0.1), ['body', 'volume']);
    expectOk(await open(b, 1, 0.3), 201, 'a sell lowers the net exposure');
  });

  test('when 10 accounts open in parallel against the group limit, then exactly as many open as fit', async () => {
    const groupId = await limitedGroup({ max_exposure: 50_000 });
    const logins = await Promise.all(Array.from({ length: 10 }, () => fundedAccount(app, token, customer.id, groupId, 100_000)));
    // 11,001 each: four fit under 50,000, a fifth would reach 55,005.
    const answers = await Promise.all(logins.map((login) => open(login, 0, 0.1)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(4);
    for (const r of answers.filter((x) => x.status !== 201)) expect422(r, ['body', 'volume']);
  });

  test('when a position is closed in a group above its limit, then the close is not refused', async () => {
    const groupId = await limitedGroup({ max_exposure: 30_000 });
    const login = await fundedAccount(app, token, customer.id, groupId, 100_000);
    const ticket = expectOk(await open(login, 0, 0.2), 201, 'open').order as number;
    // Staff lower the limit below what is open: closing still works.
    expectOk(await app.request('PATCH', `/groups/${groupId}`, { token, body: { max_exposure: 1000 } }), 200, 'lower');
    expectOk(await app.request('POST', `/orders/${ticket}/close`, { token }), 200, 'close');
  });
});
