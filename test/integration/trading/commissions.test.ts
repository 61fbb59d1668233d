import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount } from '../../helpers/trading';
import { group, ordersByTicket, pendingByTicket, placePending, quote, usdInstrument } from './engine-kit';
import { eventsOf, expect422, expectOk, ledgerOf } from './trading-kit';

jest.setTimeout(120_000);

let app: TestApp;
let token: string;
let customer: LoggedIn;

beforeAll(async () => {
  app = await startTestApp({ label: 'commissions' });
  token = await adminToken(app);
  customer = await createCustomer(app, token);
  // USD-quoted, 5 digits, 100,000 a lot, no spread: a buy opens at ask 1.1002 and closes at bid 1.1.
  await usdInstrument(app, token, 'AUDUSD', 1.1, 1.1002);
  const jpy = await app.request('POST', '/api/platform/instruments', {
    token,
    body: { symbol: 'USDJPY', digits: 3, contract_size: 100000, base_currency: 'USD', quote_currency: 'JPY' },
  });
  expectOk(jpy, 201, 'USDJPY');
  await quote(app, token, 'USDJPY', 150, 150.02);
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

async function account(terms: Record<string, unknown>, deposit = 10_000): Promise<{ login: number; groupId: string }> {
  const groupId = await group(app, token, terms);
  return { login: await fundedAccount(app, token, customer.id, groupId, deposit), groupId };
}

const open = (login: number, volume: number, extra: Record<string, unknown> = {}) =>
  app.request('POST', '/orders', { token, body: { login, symbol: 'AUDUSD', cmd: 0, volume, ...extra } });

const close = (ticket: number) => app.request('POST', `/orders/${ticket}/close`, { token });

async function balanceOf(login: number): Promise<string> {
  return expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token }), 200, 'account').balance;
}

describe('commission on the open and on the close', () => {
  test('when a per_lot group opens and closes 0.2 lots, then each side books value x volume as a commission row of the order', async () => {
    const { login } = await account({ commission_type: 'per_lot', commission_value: 3.5 });
    const opened = expectOk(await open(login, 0.2), 201, 'open');
    expect(opened).toMatchObject({ commission: '-0.70', swap: '0.00', profit: null });
    expect(await balanceOf(login)).toBe('9999.30');
    const closed = expectOk(await close(opened.order), 200, 'close');
    // profit stays the price difference alone: (1.1 - 1.1002) x 0.2 x 100,000.
    expect(closed).toMatchObject({ status: 'closed', profit: '-4.00', commission: '-1.40', swap: '0.00' });
    expect(await balanceOf(login)).toBe('9994.60');
    expect(await ledgerOf(app, login)).toEqual([
      expect.objectContaining({ kind: 'deposit', amount: '10000.00' }),
      {
        kind: 'commission',
        amount: '-0.70',
        balance_after: '9999.30',
        reference_type: 'order',
        reference_id: String(opened.order),
      },
      {
        kind: 'trade_profit',
        amount: '-4.00',
        balance_after: '9995.30',
        reference_type: 'order',
        reference_id: String(opened.order),
      },
      {
        kind: 'commission',
        amount: '-0.70',
        balance_after: '9994.60',
        reference_type: 'order',
        reference_id: String(opened.order),
      },
    ]);
    // The order view, its events (and so its webhooks) show the same sums.
    expect((await ordersByTicket(app, token, login)).get(opened.order)).toMatchObject({ commission: '-1.40', swap: '0.00' });
    expect((await eventsOf(app, 'order.opened', opened.order))[0]!.data).toMatchObject({ commission: '-0.70', swap: '0.00' });
    expect((await eventsOf(app, 'order.closed', opened.order))[0]!.data).toMatchObject({
      commission: '-1.40',
      swap: '0.00',
      profit: '-4.00',
    });
  });

  test('when a per_deal group trades, then each side books the value whatever the volume', async () => {
    const { login } = await account({ commission_type: 'per_deal', commission_value: 5 });
    const opened = expectOk(await open(login, 0.37), 201, 'open');
    expect(opened.commission).toBe('-5.00');
    expect(expectOk(await close(opened.order), 200, 'close').commission).toBe('-10.00');
    // 10,000 - 5 - (0.0002 x 37,000 = 7.40) - 5
    expect(await balanceOf(login)).toBe('9982.60');
  });

  test('when a percent group trades, then each side books value/100 of the notional at its own price, converted into the account currency', async () => {
    const { login } = await account({ commission_type: 'percent', commission_value: 0.01 });
    const opened = expectOk(await open(login, 0.2), 201, 'open');
    // 0.2 x 100,000 x 1.1002 = 22,004 USD; 0.01 % of it is 2.2004.
    expect(opened.commission).toBe('-2.20');
    // The close's notional is at its own price: 0.2 x 100,000 x 1.2 = 24,000; 0.01 % is 2.40.
    await quote(app, token, 'AUDUSD', 1.2, 1.2002);
    const closed = expectOk(await close(opened.order), 200, 'close');
    expect(closed).toMatchObject({ commission: '-4.60', profit: '1996.00' });
    await quote(app, token, 'AUDUSD', 1.1, 1.1002);

    // USDJPY's notional is in JPY: 0.1 x 100,000 x 150.02 = 1,500,200 JPY at mid 150.01 = 10,000.67 USD; 0.05 % = 5.00.
    const jpy = await account({ commission_type: 'percent', commission_value: 0.05 });
    const res = await app.request('POST', '/orders', {
      token,
      body: { login: jpy.login, symbol: 'USDJPY', cmd: 0, volume: 0.1 },
    });
    expect(expectOk(res, 201, 'open USDJPY').commission).toBe('-5.00');
  });

  test("when a group instrument row sets commission_value, then it replaces the group's value for that symbol only", async () => {
    const { login, groupId } = await account({ commission_type: 'per_lot', commission_value: 3.5 });
    expectOk(
      await app.request('PUT', `/groups/${groupId}/instruments/AUDUSD`, {
        token,
        body: { enabled: true, spread: 0, commission_value: 1, swap_long: 0, swap_short: 0 },
      }),
      201,
      'group row',
    );
    expect(expectOk(await open(login, 0.2), 201, 'open AUDUSD').commission).toBe('-0.20');
    const res = await app.request('POST', '/orders', { token, body: { login, symbol: 'USDJPY', cmd: 0, volume: 0.2 } });
    expect(expectOk(res, 201, 'open USDJPY').commission).toBe('-0.70');
  });

  test('when a group charges none, then no commission row is booked and the view shows zero', async () => {
    const { login } = await account({});
    const opened = expectOk(await open(login, 0.2), 201, 'open');
    expect(opened).toMatchObject({ commission: '0.00', swap: '0.00' });
    expectOk(await close(opened.order), 200, 'close');
    expect((await ledgerOf(app, login)).map((r) => r.kind)).toEqual(['deposit', 'trade_profit']);
  });

  test('when free margin covers the margin but not the margin and the opening commission, then the open is 422 at volume', async () => {
    // 0.1 lots at 1.1002 and 1:100 need 110.02 of margin; the commission adds 10.
    const poor = await account({ commission_type: 'per_deal', commission_value: 10 }, 115);
    expect422(await open(poor.login, 0.1), ['body', 'volume']);
    expect(await balanceOf(poor.login)).toBe('115.00');
    const enough = await account({ commission_type: 'per_deal', commission_value: 10 }, 121);
    expect(expectOk(await open(enough.login, 0.1), 201, 'open').commission).toBe('-10.00');
  });

  test('when commission_type is not one of none, per_lot, per_deal and percent, then creating or changing a group is 422 at the field', async () => {
    const created = await app.request('POST', '/groups', {
      token,
      body: { name: 'Bad commission', commission_type: 'per_trade' },
    });
    expect422(created, ['body', 'commission_type']);
    const groupId = await group(app, token);
    expect422(await app.request('PATCH', `/groups/${groupId}`, { token, body: { commission_type: 'flat' } }), [
      'body',
      'commission_type',
    ]);
  });
});

describe('commission on every path that opens or closes', () => {
  test('when a pending order fills, then its open books the commission', async () => {
    const { login } = await account({ commission_type: 'per_lot', commission_value: 3.5 });
    const ticket = await placePending(app, token, { login, symbol: 'AUDUSD', cmd: 2, volume: 0.2, trigger_price: 1.099 });
    await quote(app, token, 'AUDUSD', 1.0985, 1.0987);
    const pending = (await pendingByTicket(app, token, login)).get(ticket);
    expect(pending.status).toBe('filled');
    const filled = (await ordersByTicket(app, token, login)).get(pending.filled_order);
    expect(filled).toMatchObject({ open_price: 1.0987, commission: '-0.70' });
    expect(await balanceOf(login)).toBe('9999.30');
    await quote(app, token, 'AUDUSD', 1.1, 1.1002);
  });

  test('when sl or tp closes an order, then the close books the commission', async () => {
    const { login } = await account({ commission_type: 'per_deal', commission_value: 2 });
    const opened = expectOk(await open(login, 0.1, { tp: 1.101 }), 201, 'open');
    await quote(app, token, 'AUDUSD', 1.1012, 1.1014);
    const closed = (await ordersByTicket(app, token, login)).get(opened.order);
    // (1.1012 - 1.1002) x 10,000 = 10.00 of profit, 2 x 2 of commission.
    expect(closed).toMatchObject({ status: 'closed', close_reason: 'tp', profit: '10.00', commission: '-4.00' });
    expect(await balanceOf(login)).toBe('10006.00');
    expect((await eventsOf(app, 'order.closed', opened.order))[0]!.data.commission).toBe('-4.00');
    await quote(app, token, 'AUDUSD', 1.1, 1.1002);
  });

  test('when a bulk close closes orders, then each close books the commission', async () => {
    const { login } = await account({ commission_type: 'per_lot', commission_value: 3.5 });
    const a = expectOk(await open(login, 0.2), 201, 'open a').order as number;
    const b = expectOk(await open(login, 0.4), 201, 'open b').order as number;
    const res = await app.request('POST', '/orders/bulk-close', { token, body: { login } });
    expect(expectOk(res, 200, 'bulk close').closed).toEqual([a, b].sort((x, y) => x - y));
    const orders = await ordersByTicket(app, token, login);
    expect(orders.get(a)).toMatchObject({ close_reason: 'bulk_close', commission: '-1.40' });
    expect(orders.get(b)).toMatchObject({ close_reason: 'bulk_close', commission: '-2.80' });
    // 10,000 - 4.20 of commission - 0.0002 x 60,000 = 12.00 of spread.
    expect(await balanceOf(login)).toBe('9983.80');
  });
});

describe('negative balance protection and the stop-out', () => {
  test('when a stop-out leaves nothing open and a negative balance, then a compensation row brings it to exactly 0 with an event', async () => {
    await usdInstrument(app, token, 'NZDUSD', 1.1, 1.1002);
    const { login } = await account({ commission_type: 'per_deal', commission_value: 1, stopout_level: 50 }, 100);
    const opened = expectOk(
      await app.request('POST', '/orders', { token, body: { login, symbol: 'NZDUSD', cmd: 0, volume: 0.05 } }),
      201,
      'open',
    );
    expect(await balanceOf(login)).toBe('99.00');
    // A gap to 1.05: (1.05 - 1.1002) x 5,000 = -251.00, then the closing commission: 99 - 251 - 1 = -153.
    await quote(app, token, 'NZDUSD', 1.05, 1.0502);
    const closed = (await ordersByTicket(app, token, login)).get(opened.order);
    expect(closed).toMatchObject({ status: 'closed', close_reason: 'stop_out', profit: '-251.00', commission: '-2.00' });
    expect(await balanceOf(login)).toBe('0.00');
    const rows = await ledgerOf(app, login);
    expect(rows.slice(-3)).toEqual([
      expect.objectContaining({ kind: 'trade_profit', amount: '-251.00', balance_after: '-152.00' }),
      expect.objectContaining({ kind: 'commission', amount: '-1.00', balance_after: '-153.00' }),
      {
        kind: 'negative_balance_compensation',
        amount: '153.00',
        balance_after: '0.00',
        reference_type: 'account',
        reference_id: String(login),
      },
    ]);
    const compensated = await eventsOf(app, 'account.negative_balance_compensated', login);
    expect(compensated).toHaveLength(1);
    expect(compensated[0]!.data).toMatchObject({
      login,
      amount: '153.00',
      balance_before: '-153.00',
      balance: '0.00',
      closed_orders: [opened.order],
    });
    const stopOut = await eventsOf(app, 'account.stop_out', login);
    expect(stopOut).toHaveLength(1);
    // The customer is told.
    const told = await waitFor('the compensation notification', async () => {
      const res = await app.request('GET', '/customers/me/notifications', { token: customer.token });
      return (res.body.items as Array<{ type: string; body: string }>).find(
        (n) => n.type === 'account.negative_balance_compensated' && n.body.includes(String(login)),
      );
    });
    expect(told.body).toContain('153.00');
  });

  test('when a stop-out leaves a positive balance, then nothing is compensated', async () => {
    await usdInstrument(app, token, 'CADUSD', 1.1, 1.1002);
    const { login } = await account({ stopout_level: 50 }, 100);
    expectOk(
      await app.request('POST', '/orders', { token, body: { login, symbol: 'CADUSD', cmd: 0, volume: 0.05 } }),
      201,
      'open',
    );
    // -0.016 x 5,000 = -80.00: equity 20 against 54 of margin (37 %).
    await quote(app, token, 'CADUSD', 1.0842, 1.0844);
    await waitFor('the stop-out', async () => (await eventsOf(app, 'account.stop_out', login)).length === 1);
    expect(await balanceOf(login)).toBe('20.00');
    expect(await eventsOf(app, 'account.negative_balance_compensated', login)).toHaveLength(0);
  });
});
