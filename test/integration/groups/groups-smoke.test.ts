import { adminToken } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'groupsmoke' });
  token = await adminToken(app);
});
afterAll(() => app?.stop());

test('smoke', async () => {
  const created = await app.request('POST', '/groups', { token, body: { name: 'Standard', is_default: true } });
  expect(created.status).toBe(201);
  expect(created.body).toMatchObject({
    name: 'Standard',
    currency: 'USD',
    default_leverage: 100,
    is_default: false,
    is_active: true,
    commission_type: 'none',
  });
  const inst = await app.request('POST', '/api/platform/instruments', {
    token,
    body: { symbol: 'EURUSD', digits: 5, contract_size: 100000, base_currency: 'EUR', quote_currency: 'USD' },
  });
  expect(inst.status).toBe(201);
  const put = await app.request('PUT', `/groups/${created.body.id}/instruments/EURUSD`, {
    token,
    body: { enabled: true, spread: 2, swap_long: -1.5, swap_short: 0.5 },
  });
  expect(put.status).toBe(201);
  const clone = await app.request('POST', `/groups/${created.body.id}/clone`, { token });
  expect(clone.status).toBe(201);
  expect(clone.body).toMatchObject({ name: 'Standard (copy)', is_active: false });
  const clone2 = await app.request('POST', `/groups/${created.body.id}/clone`, { token });
  expect(clone2.body.name).toBe('Standard (copy 2)');
  const rows = await app.request('GET', `/groups/${clone.body.id}/instruments`, { token });
  expect(rows.body.items).toHaveLength(1);
  const q = await app.request('POST', '/simulator/quotes', { token, body: { symbol: 'EURUSD', bid: 1.1, ask: 1.10002 } });
  expect(q.status).toBe(200);
  const dup = await app.request('POST', '/groups', { token, body: { name: 'STANDARD' } });
  expect(dup.status).toBe(409);
  const rw = await app.request('PUT', '/simulator/random-walk', {
    token,
    body: { enabled: true, symbols: ['EURUSD'], interval_ms: 250 },
  });
  expect(rw.status).toBe(200);
  await new Promise((r) => setTimeout(r, 1200));
  const after = await app.request('GET', '/simulator/quotes', { token });
  expect(after.body.items[0].bid).not.toBe(1.1);
  const off = await app.request('PUT', '/simulator/random-walk', { token, body: { enabled: false } });
  expect(off.status).toBe(200);
  expect((await app.request('GET', '/simulator/random-walk', { token })).body.enabled).toBe(false);
});
