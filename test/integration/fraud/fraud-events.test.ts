import { adminToken, createCustomer } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced } from '../../helpers/trading';
import { walletOf, accountState } from '../money/money-kit';
import { createIntent, createProvider, depositRows, sendCallback, type Provider } from '../payments/payments-kit';

/**
 * The fraud rules at the events outside the posting hooks: a deposit intent (review holds it
 * before the customer pays; the payment then waits for staff), a login (a block answers as a
 * wrong password, a review opens a case), and the instrument fingerprint of a provider callback
 * recorded as a signal.
 */
jest.setTimeout(120_000);

let app: TestApp;
let admin: string;
let psp: Provider;

beforeAll(async () => {
  app = await startTestApp({ label: 'fraud-events', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  psp = await createProvider(app, admin, { currencies: ['USD'], min_amount: 10, max_amount: 5000 });
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

async function rule(body: Record<string, unknown>): Promise<string> {
  const res = await app.request('POST', '/api/backoffice/fraud/rules', {
    token: admin,
    body: { match: 'all', position: 1, enabled: true, ...body },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}
const disable = (id: string) =>
  app.request('PATCH', `/api/backoffice/fraud/rules/${id}`, { token: admin, body: { enabled: false } });

test('when a review rule matches a deposit intent, then it is created in review, a paid callback only notes the payment, and staff approval credits it', async () => {
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  const id = await rule({
    name: 'review deposits',
    event: 'deposit',
    conditions: [{ field: 'customer.id', op: 'eq', value: customer.id }],
    action: 'review',
  });
  try {
    const created = await createIntent(app, customer, { provider_id: psp.id, amount: 100, currency: 'USD' });
    expect(created.status).toBe(201);
    const intent = await app.request('GET', `/customers/me/deposits/${created.body.id}`, { token: customer.token });
    expect(intent.body.status).toBe('review');
    const paid = await sendCallback(app, psp.id, psp.secret, {
      external_id: `pay-${created.body.id}`,
      intent_id: created.body.id,
      status: 'completed',
      amount: '100.00',
      currency: 'USD',
      instrument_fingerprint: 'card-fp-1',
    });
    expect(paid.status).toBe(200);
    expect(await depositRows(app, created.body.id)).toEqual([]);
    expect(
      await sql(app, `select 1 from fraud_signals where customer_id = ? and instrument = 'card-fp-1'`, [customer.id]),
    ).toHaveLength(1);
    const cases = await sql(app, `select 1 from fraud_cases where customer_id = ? and status = 'open'`, [customer.id]);
    expect(cases).toHaveLength(1);
    const approved = await app.request('POST', `/api/backoffice/deposits/${created.body.id}/approve`, { token: admin, body: {} });
    expect(approved.status).toBe(200);
    expect((await accountState(app, wallet)).balance).toBe('100.00');
  } finally {
    await disable(id);
  }
});

test('when a block rule matches a deposit intent, then it is 403 FRAUD_BLOCKED and no intent is kept', async () => {
  const customer = await createCustomer(app, admin);
  const id = await rule({
    name: 'block deposits',
    event: 'deposit',
    conditions: [{ field: 'customer.id', op: 'eq', value: customer.id }],
    action: 'block',
  });
  try {
    const res = await createIntent(app, customer, { provider_id: psp.id, amount: 100, currency: 'USD' });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FRAUD_BLOCKED');
    expect(await sql(app, 'select 1 from deposit_intents where customer_id = ?', [customer.id])).toHaveLength(0);
  } finally {
    await disable(id);
  }
});

test('when a login rule blocks, then the login answers exactly as a wrong password; a review rule lets it in and opens a case; the device is recorded', async () => {
  const customer = await createCustomer(app, admin);
  const block = await rule({
    name: 'block login',
    event: 'login',
    conditions: [{ field: 'device.id', op: 'eq', value: 'bad-device' }],
    action: 'block',
  });
  try {
    const wrong = await app.request('POST', '/api/customer/login', {
      body: { email: customer.email, password: 'not-the-password-1' },
    });
    const blocked = await app.request('POST', '/api/customer/login', {
      headers: { 'x-device-id': 'bad-device' },
      body: { email: customer.email, password: customer.password },
    });
    expect(blocked.status).toBe(wrong.status);
    expect(blocked.body).toEqual(wrong.body);
    const fine = await app.request('POST', '/api/customer/login', {
      headers: { 'x-device-id': 'good-device' },
      body: { email: customer.email, password: customer.password },
    });
    expect(fine.status).toBe(200);
  } finally {
    await disable(block);
  }
  const review = await rule({
    name: 'review login',
    event: 'login',
    conditions: [{ field: 'customer.id', op: 'eq', value: customer.id }],
    action: 'review',
  });
  try {
    const res = await app.request('POST', '/api/customer/login', {
      headers: { 'x-device-id': 'good-device' },
      body: { email: customer.email, password: customer.password },
    });
    expect(res.status).toBe(200);
    expect(await sql(app, `select 1 from fraud_cases where customer_id = ?`, [customer.id])).toHaveLength(1);
    expect(
      await sql(app, `select 1 from fraud_signals where customer_id = ? and device_id = 'good-device' and event = 'login'`, [
        customer.id,
      ]),
    ).not.toHaveLength(0);
  } finally {
    await disable(review);
  }
});

test('when two customers send the same X-Device-Id, then each lists the other by device with masked evidence, and an allowed address is never evidence', async () => {
  const a = await createCustomer(app, admin);
  const b = await createCustomer(app, admin);
  const device = `shared-${a.id.slice(0, 8)}`;
  for (const c of [a, b]) {
    const res = await app.request('POST', '/api/customer/login', {
      headers: { 'x-device-id': device },
      body: { email: c.email, password: c.password },
    });
    expect(res.status).toBe(200);
  }
  const links = await app.request('GET', `/api/crm/customers/${a.id}/links`, { token: admin });
  expect(links.status).toBe(200);
  const items = links.body.items as Array<{
    customer_id: string;
    kind: string;
    value_masked: string;
    evidence: { kind: string };
  }>;
  const byDevice = items.find((i) => i.customer_id === b.id && i.kind === 'device');
  expect(byDevice).toBeDefined();
  expect(byDevice!.value_masked).not.toBe(device);
  expect(byDevice!.value_masked.endsWith(device.slice(-4))).toBe(true);
  expect(byDevice!.evidence.kind).toBe('device');
  // Every test customer logs in from the loopback address: linked by it, masked, until it is allowed.
  expect(items.find((i) => i.customer_id === b.id && i.kind === 'ip')?.value_masked).toBe('127.0.0.x');
  expect(items.length).toBeLessThanOrEqual(100);
  await app.request('PUT', '/api/backoffice/fraud/lists/allowed_ips/items', { token: admin, body: { items: ['127.0.0.1'] } });
  try {
    const again = (await app.request('GET', `/api/crm/customers/${a.id}/links`, { token: admin })).body.items as Array<{
      kind: string;
    }>;
    expect(again.filter((i) => i.kind === 'ip' || i.kind === 'ip_range')).toEqual([]);
    expect(again.some((i) => i.kind === 'device')).toBe(true);
  } finally {
    await app.request('PUT', '/api/backoffice/fraud/lists/allowed_ips/items', { token: admin, body: { items: [] } });
  }
  expect(
    (await app.request('GET', `/api/crm/customers/00000000-0000-4000-8000-000000000000/links`, { token: admin })).status,
  ).toBe(404);
});

test('when a charge-back takes a paid-out wallet below zero, then a fraud case opens in the reversal transaction', async () => {
  const customer = await createCustomer(app, admin);
  const created = await createIntent(app, customer, { provider_id: psp.id, amount: 100, currency: 'USD' });
  expect(created.status).toBe(201);
  const base = { external_id: `pay-${created.body.id}`, intent_id: created.body.id, amount: '100.00', currency: 'USD' };
  expect((await sendCallback(app, psp.id, psp.secret, { ...base, status: 'completed' })).status).toBe(200);
  const w = await app.request('POST', '/customers/me/withdraw', {
    token: customer.token,
    body: { amount: 100, payment_data: { iban: 'X1' } },
  });
  expect(w.status).toBe(202);
  expect(
    (await app.request('POST', `/api/backoffice/withdrawals/${w.body.transaction_id}/approve`, { token: admin })).status,
  ).toBe(200);
  expect(await sql(app, 'select 1 from fraud_cases where customer_id = ?', [customer.id])).toHaveLength(0);
  expect(
    (await sendCallback(app, psp.id, psp.secret, { ...base, external_id: `cb-${created.body.id}`, status: 'charged_back' }))
      .status,
  ).toBe(200);
  const cases = await sql<{ status: string; reasons: Array<{ reason: string }> }>(
    app,
    'select status, reasons from fraud_cases where customer_id = ?',
    [customer.id],
  );
  expect(cases).toHaveLength(1);
  expect(cases[0]!.reasons[0]!.reason).toMatch(/below zero/);
  expect(
    await sql(
      app,
      `select 1 from domain_events where type = 'fraud.case_opened' and customer_id is null and data->>'customer_id' = ?`,
      [customer.id],
    ),
  ).toHaveLength(1);
});
