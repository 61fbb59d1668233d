import { adminToken, createCustomer } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount } from '../../helpers/trading';
import { group, ordersByTicket, pendingByTicket, placePending, quote, usdInstrument } from './engine-kit';
import { eventsOf, expectOk, ledgerRowsForTicket } from './trading-kit';

jest.setTimeout(90_000);

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'engine-stops' });
  token = await adminToken(app);
});
afterAll(() => app?.stop());

async function open(login: number, symbol: string, cmd: 0 | 1, stops: { sl?: number; tp?: number }): Promise<number> {
  const res = await app.request('POST', '/orders', { token, body: { login, symbol, cmd, volume: 0.1, ...stops } });
  return expectOk(res, 201, 'open').order as number;
}

test('when the market reaches sl or tp, then buys close at the bid and sells at the ask, booked once, with reason sl or tp', async () => {
  await usdInstrument(app, token, 'GBPUSD', 1.1, 1.1002);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, await group(app, token), 100_000);
  const buyTp = await open(login, 'GBPUSD', 0, { tp: 1.102 });
  const buySl = await open(login, 'GBPUSD', 0, { sl: 1.099 });
  const sellTp = await open(login, 'GBPUSD', 1, { tp: 1.098 });
  const sellSl = await open(login, 'GBPUSD', 1, { sl: 1.103 });
  const state = () => ordersByTicket(app, token, login);

  await quote(app, token, 'GBPUSD', 1.10199, 1.10219); // a point short of the buy's tp
  expect([...(await state()).values()].every((o) => o.status === 'open')).toBe(true);

  await quote(app, token, 'GBPUSD', 1.102, 1.1022); // bid at the buy's tp
  let o = await state();
  expect(o.get(buyTp)).toMatchObject({ status: 'closed', close_reason: 'tp', close_price: 1.102, profit: '18.00' });
  expect(o.get(sellSl).status).toBe('open');

  await quote(app, token, 'GBPUSD', 1.1028, 1.103); // ask at the sell's sl
  o = await state();
  expect(o.get(sellSl)).toMatchObject({ status: 'closed', close_reason: 'sl', close_price: 1.103, profit: '-30.00' });

  await quote(app, token, 'GBPUSD', 1.0991, 1.0993); // above the buy's sl and the sell's tp
  o = await state();
  expect(o.get(buySl).status).toBe('open');
  expect(o.get(sellTp).status).toBe('open');

  await quote(app, token, 'GBPUSD', 1.0985, 1.0987); // bid past the buy's sl
  o = await state();
  expect(o.get(buySl)).toMatchObject({ status: 'closed', close_reason: 'sl', close_price: 1.0985, profit: '-17.00' });
  expect(o.get(sellTp).status).toBe('open');

  await quote(app, token, 'GBPUSD', 1.0978, 1.098); // ask at the sell's tp
  o = await state();
  expect(o.get(sellTp)).toMatchObject({ status: 'closed', close_reason: 'tp', close_price: 1.098, profit: '20.00' });

  for (const [ticket, reason] of [
    [buyTp, 'tp'],
    [buySl, 'sl'],
    [sellTp, 'tp'],
    [sellSl, 'sl'],
  ] as const) {
    const closed = await eventsOf(app, 'order.closed', ticket);
    expect(closed).toHaveLength(1);
    expect(closed[0]!.data.close_reason).toBe(reason);
    expect(await ledgerRowsForTicket(app, ticket)).toBe(1);
  }
  await expectLedgerBalanced(app);
});

test('when a filled order has a trailing stop, then sl follows a rising bid by the distance, never moves back, and closes the order when hit', async () => {
  await usdInstrument(app, token, 'AUDUSD', 1.1, 1.1002);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, await group(app, token), 100_000);
  const pending = await placePending(app, token, {
    login,
    symbol: 'AUDUSD',
    cmd: 4,
    volume: 0.1,
    trigger_price: 1.101,
    trailing_stop: 0.001,
  });
  await quote(app, token, 'AUDUSD', 1.1008, 1.101);
  const ticket = (await pendingByTicket(app, token, login)).get(pending).filled_order as number;
  const position = async () => (await ordersByTicket(app, token, login)).get(ticket);
  expect(await position()).toMatchObject({ status: 'open', open_price: 1.101, trailing_stop: 0.001 });

  const steps: Array<[number, number | null]> = [
    [1.102, 1.101],
    [1.103, 1.102],
    [1.1025, 1.102], // the bid falls back: sl stays
    [1.1021, 1.102],
    [1.1035, 1.1025],
  ];
  for (const [bid, sl] of steps) {
    await quote(app, token, 'AUDUSD', bid, Number((bid + 0.0002).toFixed(5)));
    expect((await position()).sl).toBe(sl);
  }
  await quote(app, token, 'AUDUSD', 1.1024, 1.1026); // under the trailed sl
  expect(await position()).toMatchObject({ status: 'closed', close_reason: 'sl', close_price: 1.1024, profit: '14.00' });
  expect(await ledgerRowsForTicket(app, ticket)).toBe(1);
  await expectLedgerBalanced(app);
});

test('when one quote reaches the tp of more orders than a lookup page holds, then every one closes once, with reason tp', async () => {
  await usdInstrument(app, token, 'CADUSD', 0.7, 0.7002);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, await group(app, token), 1_000_000);
  const [account] = await sql<{ id: string }>(app, 'select id from accounts where login = ?', [login]);
  // 501 buys with a tp (written as openMarketOrder writes them): a lookup page of 500 and one more.
  const count = 501;
  await sql(
    app,
    `insert into orders (id, created_at, updated_at, account_id, login, symbol, cmd, volume, open_price, contract_size, status, tp)
     select gen_random_uuid(), now(), now(), ?, ?, 'CADUSD', 0, 0.01, 0.7002, 100000, 'open', 0.701 from generate_series(1, ?::int)`,
    [account!.id, login, count],
  );
  await quote(app, token, 'CADUSD', 0.701, 0.7012, 60_000);
  const [closed] = await sql<{ n: number; booked: number }>(
    app,
    `select count(*)::int as n,
            (select count(*)::int from ledger_entries l where l.account_id = ? and l.kind = 'trade_profit') as booked
       from orders where account_id = ? and status = 'closed' and close_reason = 'tp'`,
    [account!.id, account!.id],
  );
  expect(closed).toEqual({ n: count, booked: count });
  await expectLedgerBalanced(app);
});
