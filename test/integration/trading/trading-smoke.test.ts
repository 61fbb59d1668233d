import { adminToken, createCustomer } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, openOrder, setQuote, setUpMarket } from '../../helpers/trading';

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'tradesmoke' });
  token = await adminToken(app);
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

test('smoke: accounts, orders, bulk close', async () => {
  const market = await setUpMarket(app, token);
  const customer = await createCustomer(app, token);
  const wallets = await app.request('GET', '/customers/me/accounts', { token: customer.token });
  expect(wallets.body.items).toEqual([expect.objectContaining({ kind: 'wallet', currency: 'USD', balance: '0.00' })]);
  const login = await fundedAccount(app, token, customer.id, market.groupId);
  const t1 = await openOrder(app, customer.token, login, 0, 1);
  await setQuote(app, token, 'EURUSD', 1.101, 1.1012);
  const acct = await app.request('GET', `/api/crm/accounts/${login}`, { token });
  expect(acct.body).toMatchObject({ balance: '10000.00', equity: '10080.00', margin: '1101.00' });
  const closed = await app.request('POST', `/orders/${t1}/close`, { token: customer.token });
  expect(closed.status).toBe(200);
  expect(closed.body.profit).toBe('80.00');
  const tickets = [];
  for (let i = 0; i < 5; i++)
    tickets.push(await openOrder(app, token, login, i % 2 === 0 ? 0 : 1, 0.1, i === 4 ? 'USDJPY' : 'EURUSD'));
  await app.request('DELETE', '/simulator/quotes/USDJPY', { token });
  const bulk = await app.request('POST', '/orders/bulk-close', { token, body: { login, comment: 'eod' } });
  expect(bulk.status).toBe(200);
  expect(bulk.body.closed.sort()).toEqual(tickets.slice(0, 4).sort());
  expect(bulk.body.failed).toEqual([{ ticket: tickets[4], reason: 'No quote for USDJPY' }]);
  const pending = await app.request('POST', '/orders/pending', {
    token,
    body: { login, symbol: 'EURUSD', cmd: 2, volume: 0.1, trigger_price: 1.09, sl: 1.08, tp: 1.12 },
  });
  expect(pending.status).toBe(201);
  const patched = await app.request('PATCH', `/orders/pending/${pending.body.order}?login=${login}`, {
    token,
    body: { sl: null, tp: 1.13 },
  });
  expect(patched.status).toBe(200);
  expect(patched.body).toMatchObject({ sl: null, tp: 1.13, trigger_price: 1.09 });
  const bad = await app.request('PATCH', `/orders/pending/${pending.body.order}?login=${login}`, { token, body: { sl: 1.095 } });
  expect(bad.status).toBe(422);
  expect(bad.body.detail[0].loc).toEqual(['body', 'sl']);
});
