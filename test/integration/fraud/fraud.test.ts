import { adminToken, createCustomer, createStaff, loginCustomer, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, setQuote, setUpMarket } from '../../helpers/trading';
import { accountState, walletOf, withdraw } from '../money/money-kit';

/**
 * Fraud lists, rules and their evaluation on the money paths (withdrawals through the posting
 * hooks), the stored decision, review holds with cases, case resolution and its actions.
 */
jest.setTimeout(120_000);

let app: TestApp;
let admin: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'fraud', env: { ROLE: 'api' } });
  admin = await adminToken(app);
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

async function funded(amount = 500): Promise<{ customer: LoggedIn; wallet: number }> {
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  const res = await app.request('POST', `/api/backoffice/accounts/${wallet}/deposits`, { token: admin, body: { amount } });
  expect(res.status).toBeLessThan(300);
  return { customer, wallet };
}

async function rule(body: Record<string, unknown>) {
  const res = await app.request('POST', '/api/backoffice/fraud/rules', {
    token: admin,
    body: { match: 'all', position: 10, enabled: true, ...body },
  });
  expect(res.status).toBe(201);
  return res.body as { id: string; version: number };
}

async function disable(id: string) {
  expect(
    (await app.request('PATCH', `/api/backoffice/fraud/rules/${id}`, { token: admin, body: { enabled: false } })).status,
  ).toBe(200);
}

test('when a list is replaced, then GET reads it back, a bad CIDR is 422, an unknown list is 422, and staff without manage_fraud_rules get 403', async () => {
  const put = await app.request('PUT', '/api/backoffice/fraud/lists/blocked_cidrs/items', {
    token: admin,
    body: { items: ['10.9.0.0/16', '2001:db8::/48'] },
  });
  expect(put.status).toBe(200);
  expect((await app.request('GET', '/api/backoffice/fraud/lists/blocked_cidrs/items', { token: admin })).body).toEqual({
    items: ['10.9.0.0/16', '2001:db8::/48'],
  });
  const bad = await app.request('PUT', '/api/backoffice/fraud/lists/blocked_cidrs/items', {
    token: admin,
    body: { items: ['10.0.0.0/99'] },
  });
  expect(bad.status).toBe(422);
  expect(bad.body.detail[0].loc).toEqual(['body', 'items', 0]);
  expect((await app.request('GET', '/api/backoffice/fraud/lists/nope/items', { token: admin })).status).toBe(422);
  const clerk = await createStaff(app, ['view_customers'], admin);
  expect((await app.request('GET', '/api/backoffice/fraud/lists/blocked_ips/items', { token: clerk.token })).status).toBe(403);
  await app.request('PUT', '/api/backoffice/fraud/lists/blocked_cidrs/items', { token: admin, body: { items: [] } });
});

test('when a rule names an unknown field or compares text with gt, then it is 422 at that path', async () => {
  const unknown = await app.request('POST', '/api/backoffice/fraud/rules', {
    token: admin,
    body: {
      name: 'x',
      event: 'withdrawal',
      match: 'all',
      conditions: [{ field: 'nope', op: 'eq', value: 1 }],
      action: 'block',
      position: 1,
      enabled: true,
    },
  });
  expect(unknown.status).toBe(422);
  expect(unknown.body.detail[0].loc).toEqual(['body', 'conditions', 0, 'field']);
  const textGt = await app.request('POST', '/api/backoffice/fraud/rules', {
    token: admin,
    body: {
      name: 'x',
      event: 'withdrawal',
      match: 'all',
      conditions: [{ field: 'amount_usd', op: 'gt', value: 'a' }],
      action: 'block',
      position: 1,
      enabled: true,
    },
  });
  expect(textGt.status).toBe(422);
});

test('when a block rule matches a withdrawal, then it is 403 FRAUD_BLOCKED naming no rule, nothing is reserved, and the evaluation records the rule, its version and the values read', async () => {
  const { customer, wallet } = await funded();
  const r = await rule({
    name: 'Secret big-withdrawal rule',
    event: 'withdrawal',
    conditions: [
      { field: 'customer.id', op: 'eq', value: customer.id },
      { field: 'amount_usd', op: 'gte', value: 100 },
    ],
    action: 'block',
  });
  try {
    const res = await withdraw(app, customer, 150);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FRAUD_BLOCKED');
    expect(res.text).not.toContain('Secret');
    expect(await accountState(app, wallet)).toMatchObject({ balance: '500.00', reserved: '0.00' });
    expect(await sql(app, 'select 1 from withdrawals where customer_id = ?', [customer.id])).toHaveLength(0);
    // The refusal rolled back, but its evaluation was kept: the rule and version that decided, and the values read.
    const [kept] = await sql<{ rule_id: string; rule_version: number; fields: Record<string, unknown> }>(
      app,
      `select rule_id, rule_version, fields from fraud_evaluations where customer_id = ? and decision = 'block'`,
      [customer.id],
    );
    expect(kept).toMatchObject({
      rule_id: r.id,
      rule_version: r.version,
      fields: { 'customer.id': customer.id, amount_usd: 150 },
    });
    // A smaller amount does not match the rule: the default allows, and that evaluation is stored.
    const small = await withdraw(app, customer, 50);
    expect(small.status).toBe(202);
    const [evaluation] = await sql<{
      decision: string;
      decided_by: string;
      rule_id: string | null;
      fields: Record<string, unknown>;
      signals: Record<string, unknown>;
    }>(
      app,
      `select decision, decided_by, rule_id, fields, signals from fraud_evaluations where customer_id = ? and event = 'withdrawal' and decision = 'allow'`,
      [customer.id],
    );
    expect(evaluation).toMatchObject({ decision: 'allow', decided_by: 'default', rule_id: null });
    expect(evaluation!.fields).toMatchObject({ 'customer.id': customer.id, amount_usd: 50 });
    expect(evaluation!.signals).toMatchObject({ customerId: customer.id, currency: 'USD' });
  } finally {
    await disable(r.id);
  }
});

test('when a review rule matches, then the withdrawal stays pending with review_reason, a case opens with fraud.case_opened, and a second one extends that case', async () => {
  const { customer } = await funded();
  const r = await rule({
    name: 'review all of one customer',
    event: 'withdrawal',
    conditions: [{ field: 'customer.id', op: 'in', value: [customer.id] }],
    action: 'review',
  });
  try {
    const first = await withdraw(app, customer, 20);
    expect(first.status).toBe(202);
    expect(first.body.status).toBe('pending');
    const second = await withdraw(app, customer, 30);
    expect(second.status).toBe(202);
    const held = await sql<{ review_reason: string | null; status: string }>(
      app,
      'select review_reason, status from withdrawals where customer_id = ?',
      [customer.id],
    );
    expect(held).toHaveLength(2);
    expect(held.every((w) => w.status === 'pending' && w.review_reason)).toBe(true);
    const staffView = await app.request('GET', `/api/backoffice/withdrawals/${first.body.transaction_id}`, { token: admin });
    expect(staffView.body.review_reason).toBeTruthy();
    const cases = await app.request('GET', '/api/backoffice/fraud/cases?status=open', { token: admin });
    const mine = (cases.body.items as Array<{ id: string; customer_id: string; reasons: unknown[] }>).filter(
      (c) => c.customer_id === customer.id,
    );
    expect(mine).toHaveLength(1);
    expect(mine[0]!.reasons).toHaveLength(2);
    expect(
      await sql(
        app,
        `select 1 from domain_events where type = 'fraud.case_opened' and customer_id is null and data->>'customer_id' = ?`,
        [customer.id],
      ),
    ).toHaveLength(1);

    // Resolving with block_customer and release_holds: access no_login, holds released, sessions ended, audited, event.
    const resolved = await app.request('POST', `/api/backoffice/fraud/cases/${mine[0]!.id}/resolve`, {
      token: admin,
      body: { verdict: 'fraud', actions: ['block_customer', 'release_holds', 'forfeit_bonuses'], note: 'Confirmed' },
    });
    expect(resolved.status).toBe(200);
    expect(resolved.body).toMatchObject({ status: 'resolved', verdict: 'fraud' });
    expect(await sql(app, 'select access from customers where id = ?', [customer.id])).toEqual([{ access: 'no_login' }]);
    expect(
      await sql(app, 'select review_reason from withdrawals where customer_id = ? and review_reason is not null', [customer.id]),
    ).toHaveLength(0);
    expect((await app.request('GET', '/customers/me/accounts', { token: customer.token })).status).toBe(401);
    expect(
      await sql(
        app,
        `select 1 from domain_events where (type = 'fraud.case_resolved' and data->>'customer_id' = ?) or (type = 'customer.access_changed' and customer_id = ?)`,
        [customer.id, customer.id],
      ),
    ).toHaveLength(2);
    expect(
      await sql(app, `select 1 from audit_entries where action = 'fraud_case.resolved' and entity_id = ?`, [mine[0]!.id]),
    ).toHaveLength(1);
    const again = await app.request('POST', `/api/backoffice/fraud/cases/${mine[0]!.id}/resolve`, {
      token: admin,
      body: { verdict: 'fraud', actions: [], note: 'x' },
    });
    expect(again.status).toBe(409);
    // A blocked customer's login answers as a wrong password.
    const login = await app.request('POST', '/api/customer/login', {
      body: { email: customer.email, password: 'wrong-password-123' },
    });
    const blocked = await app.request('POST', '/api/customer/login', {
      body: { email: customer.email, password: customer.password },
    });
    expect(blocked.status).toBe(login.status);
    expect(blocked.body).toEqual(login.body);
  } finally {
    await disable(r.id);
  }
});

test('when the device is on the blocked list, then a withdrawal sent with that X-Device-Id is blocked and one without it is not; the device is recorded as a signal', async () => {
  const { customer } = await funded();
  const device = `dev-${customer.id.slice(0, 8)}`;
  await app.request('PUT', '/api/backoffice/fraud/lists/blocked_devices/items', { token: admin, body: { items: [device] } });
  try {
    const blocked = await app.request('POST', '/customers/me/withdraw', {
      token: customer.token,
      headers: { 'x-device-id': device },
      body: { amount: 10, payment_data: { iban: 'DE89 3704 0044 0532 0130 00' } },
    });
    expect(blocked.status).toBe(403);
    expect(blocked.body.code).toBe('FRAUD_BLOCKED');
    const ok = await app.request('POST', '/customers/me/withdraw', {
      token: customer.token,
      headers: { 'x-device-id': 'other-device' },
      body: { amount: 10, payment_data: { iban: 'de89370400440532013000' } },
    });
    expect(ok.status).toBe(202);
    const signals = await sql<{ device_id: string; ip: string | null; destination: string; event: string }>(
      app,
      "select device_id, ip, destination from fraud_signals where customer_id = ? and event = 'withdrawal'",
      [customer.id],
    );
    expect(signals.map((s) => s.device_id)).toContain('other-device');
    // The destination is a fingerprint, the same however the IBAN was typed, never the raw data.
    expect(new Set(signals.map((s) => s.destination)).size).toBe(1);
    expect(signals[0]!.destination).not.toContain('DE89');
  } finally {
    await app.request('PUT', '/api/backoffice/fraud/lists/blocked_devices/items', { token: admin, body: { items: [] } });
  }
});

test('when a transfer out is evaluated, then its signal and one evaluation are stored with it, whether a rule reads the database or not, and a block keeps only the evaluation', async () => {
  const { customer, wallet } = await funded();
  const { groupId } = await setUpMarket(app, admin);
  const live = await app.request('POST', `/api/crm/customers/${customer.id}/accounts`, {
    token: admin,
    body: { kind: 'live', group_id: groupId },
  });
  const send = (device: string) =>
    app.request('POST', '/customers/me/transfer', {
      token: customer.token,
      headers: { 'x-device-id': device },
      body: { from_login: wallet, to_login: live.body.login, amount: 5 },
    });
  const evaluationsOf = (reference: string) =>
    sql<{ decision: string; decided_by: string; fields: Record<string, unknown>; signals: Record<string, unknown> }>(
      app,
      `select decision, decided_by, fields, signals from fraud_evaluations where event = 'transfer' and reference_id = ?`,
      [reference],
    );
  const signalsOf = (device: string) =>
    sql(app, `select 1 from fraud_signals where customer_id = ? and event = 'transfer' and device_id = ?`, [customer.id, device]);

  // Nothing a rule reads comes from the database: the decision is made before the statement that stores it.
  const plain = await send('transfer-device-1');
  expect(plain.status).toBe(200);
  const [allowed, ...more] = await evaluationsOf(plain.body.transfer_out_id);
  expect(more).toEqual([]);
  expect(allowed).toMatchObject({ decision: 'allow', decided_by: 'default' });
  expect(allowed!.signals).toMatchObject({ customerId: customer.id, deviceId: 'transfer-device-1', email: customer.email });
  expect(await signalsOf('transfer-device-1')).toHaveLength(1);

  const r = await rule({
    name: 'review this customer by level',
    event: 'transfer',
    conditions: [
      { field: 'customer.id', op: 'eq', value: customer.id },
      { field: 'kyc.level', op: 'gte', value: 0 },
    ],
    action: 'review',
  });
  try {
    const reviewed = await send('transfer-device-2');
    expect(reviewed.status).toBe(200);
    const [held, ...again] = await evaluationsOf(reviewed.body.transfer_out_id);
    expect(again).toEqual([]);
    expect(held).toMatchObject({ decision: 'review', decided_by: 'rule' });
    expect(held!.fields).toMatchObject({ 'customer.id': customer.id, 'kyc.level': expect.any(Number) });
    expect(await signalsOf('transfer-device-2')).toHaveLength(1);
  } finally {
    await disable(r.id);
  }

  const before = await accountState(app, wallet);
  await app.request('PUT', '/api/backoffice/fraud/lists/blocked_devices/items', {
    token: admin,
    body: { items: ['transfer-device-3'] },
  });
  try {
    const blocked = await send('transfer-device-3');
    expect(blocked.status).toBe(403);
    expect(blocked.body.code).toBe('FRAUD_BLOCKED');
    const stored = await sql<{ decided_by: string }>(
      app,
      `select decided_by from fraud_evaluations where event = 'transfer' and customer_id = ? and decision = 'block'`,
      [customer.id],
    );
    expect(stored).toEqual([{ decided_by: 'list:blocked_devices' }]);
    // The signal went with the refused transfer's transaction.
    expect(await signalsOf('transfer-device-3')).toEqual([]);
    expect(await accountState(app, wallet)).toEqual(before);
  } finally {
    await app.request('PUT', '/api/backoffice/fraud/lists/blocked_devices/items', { token: admin, body: { items: [] } });
  }
});

test('when a customer is close_only, then it refuses transfers and new orders with 403 ACCESS_RESTRICTED but keeps withdrawals', async () => {
  const { customer, wallet } = await funded();
  await sql(app, `update customers set access = 'close_only' where id = ?`, [customer.id]);
  const { groupId } = await setUpMarket(app, admin);
  const live = await app.request('POST', `/api/crm/customers/${customer.id}/accounts`, {
    token: admin,
    body: { kind: 'live', group_id: groupId },
  });
  expect(live.status).toBe(201);
  {
    const t = await app.request('POST', '/customers/me/transfer', {
      token: customer.token,
      body: { from_login: wallet, to_login: live.body.login, amount: 5 },
    });
    expect(t.status).toBe(403);
    expect(t.body.code).toBe('ACCESS_RESTRICTED');
  }
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
  await app.request('POST', `/api/backoffice/accounts/${live.body.login}/deposits`, { token: admin, body: { amount: 1000 } });
  const order = await app.request('POST', '/orders', {
    token: customer.token,
    body: { login: live.body.login, symbol: 'EURUSD', cmd: 0, volume: 0.01 },
  });
  expect(order.status).toBe(403);
  expect(order.body.code).toBe('ACCESS_RESTRICTED');
  expect((await withdraw(app, customer, 5)).status).toBe(202);
});

test('when a case is listed by a staff user without review_fraud_cases, then it is 403; a fresh customer can still log in', async () => {
  const clerk = await createStaff(app, ['view_customers'], admin);
  expect((await app.request('GET', '/api/backoffice/fraud/cases', { token: clerk.token })).status).toBe(403);
  const customer = await createCustomer(app, admin);
  expect((await loginCustomer(app, customer.email, customer.password)).access_token).toBeTruthy();
});

test('when staff set access through PATCH, then moderate_customers is needed, the change is audited with customer.access_changed, and no_login ends the sessions', async () => {
  const customer = await createCustomer(app, admin);
  const manager = await createStaff(app, ['manage_customers', 'view_customers'], admin);
  expect(
    (await app.request('PATCH', `/api/crm/customers/${customer.id}`, { token: manager.token, body: { access: 'no_login' } }))
      .status,
  ).toBe(403);
  const res = await app.request('PATCH', `/api/crm/customers/${customer.id}`, { token: admin, body: { access: 'no_login' } });
  expect(res.status).toBe(200);
  expect(res.body.access).toBe('no_login');
  expect((await app.request('GET', '/customers/me/accounts', { token: customer.token })).status).toBe(401);
  expect(
    await sql(app, `select 1 from audit_entries where action = 'customer.access_changed' and entity_id = ?`, [customer.id]),
  ).toHaveLength(1);
  expect(
    await sql(app, `select 1 from domain_events where type = 'customer.access_changed' and customer_id = ?`, [customer.id]),
  ).toHaveLength(1);
  const rules = await app.request('GET', '/api/backoffice/fraud/rules', { token: admin });
  const builtin = (rules.body.items as Array<{ builtin: boolean; enabled: boolean }>).filter((r) => r.builtin);
  expect(builtin.length).toBeGreaterThanOrEqual(3);
  expect(builtin.every((r) => !r.enabled)).toBe(true);
});

test('when a rule is previewed, then it counts what it would have decided over stored evaluations, reports missing fields, gives examples, and writes nothing', async () => {
  const { customer } = await funded();
  expect((await withdraw(app, customer, 20)).status).toBe(202);
  expect((await withdraw(app, customer, 200)).status).toBe(202);
  const count = async () => Number((await sql<{ n: string }>(app, 'select count(*) as n from fraud_evaluations'))[0]!.n);
  const before = await count();
  const preview = (rule: Record<string, unknown>, days = 7) =>
    app.request('POST', '/api/backoffice/fraud/rules/preview', {
      token: admin,
      body: { rule: { name: 'try', event: 'withdrawal', match: 'all', position: 1, enabled: true, ...rule }, days },
    });
  const big = await preview({
    conditions: [
      { field: 'customer.id', op: 'eq', value: customer.id },
      { field: 'amount_usd', op: 'gte', value: 100 },
    ],
    action: 'block',
  });
  expect(big.status).toBe(200);
  expect(big.body).toMatchObject({ would_block: 1, would_review: 0, missing_fields: 0, examples: [customer.id] });
  expect(big.body.would_allow).toBe(big.body.evaluations - 1);
  const unrecorded = await preview({ conditions: [{ field: 'kyc.level', op: 'eq', value: 0 }], action: 'review' });
  expect(unrecorded.body.would_review).toBe(0);
  expect(unrecorded.body.missing_fields).toBe(unrecorded.body.evaluations);
  expect(unrecorded.body.missing_by_field).toEqual({ 'kyc.level': unrecorded.body.evaluations });
  expect((await preview({ conditions: [{ field: 'customer.id', op: 'eq', value: 'x' }], action: 'block' }, 91)).status).toBe(422);
  expect(await count()).toBe(before);
});

test('when a case moves, then open goes to investigating with an assignee, a discarded case is closed to changes (409 CASE_CLOSED), and each move is audited', async () => {
  const { customer } = await funded();
  const r = await rule({
    name: 'review for case moves',
    event: 'transfer',
    conditions: [{ field: 'customer.id', op: 'eq', value: customer.id }],
    action: 'review',
  });
  try {
    const { groupId } = await setUpMarket(app, admin);
    const live = await app.request('POST', `/api/crm/customers/${customer.id}/accounts`, {
      token: admin,
      body: { kind: 'live', group_id: groupId },
    });
    const wallet = await walletOf(app, customer);
    const t = await app.request('POST', '/customers/me/transfer', {
      token: customer.token,
      body: { from_login: wallet, to_login: live.body.login, amount: 5 },
    });
    expect(t.status).toBe(200);
    const [c] = await sql<{ id: string }>(app, `select id from fraud_cases where customer_id = ? and status = 'open'`, [
      customer.id,
    ]);
    expect(c).toBeDefined();
    const me = (await sql<{ id: string }>(app, `select id from staff_users order by created_at limit 1`))[0]!.id;
    const moved = await app.request('PATCH', `/api/backoffice/fraud/cases/${c!.id}`, {
      token: admin,
      body: { status: 'investigating', assignee_id: me },
    });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ status: 'investigating', assignee_id: me });
    const mine = await app.request('GET', '/api/backoffice/fraud/cases?status=investigating&assignee=me', { token: admin });
    expect((mine.body.items as Array<{ id: string }>).map((x) => x.id)).toContain(c!.id);
    expect(
      (await app.request('PATCH', `/api/backoffice/fraud/cases/${c!.id}`, { token: admin, body: { status: 'discarded' } }))
        .status,
    ).toBe(200);
    expect(
      (await app.request('PATCH', `/api/backoffice/fraud/cases/${c!.id}`, { token: admin, body: { status: 'open' } })).status,
    ).toBe(409);
    expect(
      await sql(app, `select 1 from audit_entries where action = 'fraud_case.updated' and entity_id = ?`, [c!.id]),
    ).toHaveLength(2);
  } finally {
    await disable(r.id);
  }
});
