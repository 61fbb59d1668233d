import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { removeExpiredRows } from '../../../src/domain/retention/retention';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, setQuote, setUpMarket } from '../../helpers/trading';
import { accountState, transfer, walletOf, withdraw } from '../money/money-kit';
import { expectError, expectOk, openAccount } from '../trading/trading-kit';
import { createIntent, createProvider, depositRows, inboundOutcomes, sendCallback, type Provider } from './payments-kit';

/**
 * The public callback route: Standard Webhooks signatures (signed by the reference library,
 * sent over real HTTP), allowed addresses, the inbound log, deduplication, exactly-once
 * crediting through the deposit booking, review with staff approval, reversals that may take a
 * wallet below zero (and then block money out), and the simulator provider.
 */
jest.setTimeout(120_000);

let app: TestApp;
let admin: string;
let psp: Provider;
let groupId: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'psp-callbacks' });
  admin = await adminToken(app);
  ({ groupId } = await setUpMarket(app, admin));
  psp = await createProvider(app, admin, { currencies: ['USD', 'EUR'], min_amount: 10, max_amount: 5000 });
});
afterAll(() => app?.stop());
afterEach(() => expectLedgerBalanced(app));

async function pendingIntent(customer: LoggedIn, amount = 100, currency = 'USD', provider: Provider = psp, login?: number) {
  return expectOk(
    await createIntent(app, customer, { provider_id: provider.id, amount, currency, ...(login ? { login } : {}) }),
    201,
  ) as { id: string; login: number; amount: string; currency: string };
}

const completed = (
  intent: { id: string },
  amount: string | number = '100.00',
  currency = 'USD',
  externalId = `pay-${intent.id}`,
) => ({
  external_id: externalId,
  intent_id: intent.id,
  status: 'completed' as const,
  amount,
  currency,
});

/** The customer's mail of `template` is rendered and handed over (logged: the test app has no SMTP server). */
async function expectMail(customer: LoggedIn, template: string): Promise<void> {
  const row = await waitFor(`the ${template} mail`, async () => {
    const [m] = await sql<{ status: string; last_error: string | null }>(
      app,
      `select status, last_error from mail_messages where template = ? and lower(to_address) = lower(?) and status in ('logged', 'sent', 'failed')`,
      [template, customer.email],
    );
    return m;
  });
  expect(row).toMatchObject({ status: 'logged' });
}

test('when the same signed completed callback arrives 5 times in parallel, then the wallet is credited once, all answer 200, and the log shows 1 processed and 4 duplicate', async () => {
  const provider = await createProvider(app, admin);
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  const intent = await pendingIntent(customer, 100, 'USD', provider);
  const body = completed(intent);
  const answers = await Promise.all(Array.from({ length: 5 }, () => sendCallback(app, provider.id, provider.secret, body)));
  expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
  expect(answers.map((a) => a.body.outcome).sort()).toEqual(['duplicate', 'duplicate', 'duplicate', 'duplicate', 'processed']);
  expect(await depositRows(app, intent.id)).toEqual([{ kind: 'deposit', amount: '100.00' }]);
  expect((await accountState(app, wallet)).balance).toBe('100.00');
  expect(await inboundOutcomes(app, provider.id)).toEqual({ processed: 1, duplicate: 4 });
  const view = expectOk(await app.request('GET', `/customers/me/deposits/${intent.id}`, { token: customer.token }), 200);
  expect(view).toMatchObject({ status: 'completed', external_id: body.external_id, credited_amount: '100.00' });
  const events = await sql<{ data: Record<string, unknown> }>(
    app,
    `select data from domain_events where type = 'deposit.completed' and customer_id = ?`,
    [customer.id],
  );
  expect(events).toHaveLength(1);
  expect(events[0]!.data).toMatchObject({
    id: intent.id,
    provider_id: provider.id,
    external_id: body.external_id,
    amount: '100.00',
  });
  const registry = expectOk(await app.request('GET', `/api/admin/integrations/${provider.id}`, { token: admin }), 200);
  expect(registry.last_inbound_at).not.toBeNull();
});

test('when the signature is wrong, stale or missing, then it is 401 SIGNATURE_INVALID, nothing changes, and each attempt is logged rejected', async () => {
  const provider = await createProvider(app, admin);
  const customer = await createCustomer(app, admin);
  const intent = await pendingIntent(customer, 100, 'USD', provider);
  const body = completed(intent);
  expectError(
    await sendCallback(app, provider.id, `whsec_${Buffer.alloc(32, 7).toString('base64')}`, body),
    401,
    'SIGNATURE_INVALID',
  );
  expectError(
    await sendCallback(app, provider.id, provider.secret, body, { at: new Date(Date.now() - 6 * 60_000) }),
    401,
    'SIGNATURE_INVALID',
  );
  expectError(
    await sendCallback(app, provider.id, provider.secret, body, { at: new Date(Date.now() + 6 * 60_000) }),
    401,
    'SIGNATURE_INVALID',
  );
  expectError(
    await app.request('POST', `/api/integrations/payments/${provider.id}/callbacks`, { body }),
    401,
    'SIGNATURE_INVALID',
  );
  expect(await inboundOutcomes(app, provider.id)).toEqual({ rejected: 4 });
  expect(await depositRows(app, intent.id)).toEqual([]);
  const log = expectOk(
    await app.request('GET', `/api/admin/integrations/${provider.id}/inbound?outcome=rejected`, { token: admin }),
    200,
  );
  expect(log.total).toBe(4);
  expect(log.items[0]).toMatchObject({
    integration_id: provider.id,
    signature_valid: false,
    outcome: 'rejected',
    external_id: body.external_id,
    source_ip: '127.0.0.1',
  });
  // Within the tolerance a slightly old timestamp passes.
  expect((await sendCallback(app, provider.id, provider.secret, body, { at: new Date(Date.now() - 4 * 60_000) })).status).toBe(
    200,
  );
});

test('when the source address is outside allowed_ips, then a correctly signed callback is 401 and logged rejected', async () => {
  const fenced = await createProvider(app, admin, { allowed_ips: ['203.0.113.0/24'] });
  const customer = await createCustomer(app, admin);
  const intent = await pendingIntent(customer, 100, 'USD', fenced);
  expectError(await sendCallback(app, fenced.id, fenced.secret, completed(intent)), 401, 'SIGNATURE_INVALID');
  expect(await inboundOutcomes(app, fenced.id)).toEqual({ rejected: 1 });
  expectOk(
    await app.request('PATCH', `/api/admin/payment-providers/${fenced.id}`, {
      token: admin,
      body: { allowed_ips: ['127.0.0.0/8', '::1/128'] },
    }),
    200,
  );
  expect((await sendCallback(app, fenced.id, fenced.secret, completed(intent))).body).toMatchObject({
    outcome: 'processed',
    deposit_status: 'completed',
  });
});

test('when a later report is illegal for the state (failed after completed), then it is ignored, logged and answered 200', async () => {
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  const intent = await pendingIntent(customer);
  expectOk(await sendCallback(app, psp.id, psp.secret, completed(intent)), 200);
  const late = await sendCallback(app, psp.id, psp.secret, { ...completed(intent), status: 'failed' });
  expect(late.status).toBe(200);
  expect(late.body).toMatchObject({ outcome: 'processed', deposit_status: 'completed' });
  expect((await accountState(app, wallet)).balance).toBe('100.00');
  const [row] = await sql<{ error: string }>(app, `select error from integration_inbound where id = ?`, [late.body.inbound_id]);
  expect(row!.error).toContain('completed cannot become failed');
  expect(
    app.logs.some((l) => l.msg === 'deposit transition ignored: not allowed from its current state' && l.intent_id === intent.id),
  ).toBe(true);
});

test('when the provider reports failed, then the intent fails with its event and a notification, and nothing is credited', async () => {
  const customer = await createCustomer(app, admin);
  const intent = await pendingIntent(customer);
  const res = await sendCallback(app, psp.id, psp.secret, { ...completed(intent), status: 'failed' });
  expect(res.body).toMatchObject({ outcome: 'processed', deposit_status: 'failed' });
  expect(await depositRows(app, intent.id)).toEqual([]);
  const notes = await waitFor('the failed-deposit notification', async () => {
    const page = expectOk(await app.request('GET', '/customers/me/notifications', { token: customer.token }), 200);
    return page.items.length ? page.items : undefined;
  });
  expect(notes[0]).toMatchObject({ type: 'deposit.failed', title: 'Deposit failed' });
  await expectMail(customer, 'deposit_failed');
});

test('when the paid amount differs, then the intent goes to review with expected and received, and staff approve it credited as received', async () => {
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  const intent = await pendingIntent(customer);
  const res = await sendCallback(app, psp.id, psp.secret, completed(intent, '90.00'));
  expect(res.body).toMatchObject({ outcome: 'processed', deposit_status: 'review' });
  expect(await depositRows(app, intent.id)).toEqual([]);
  const approver = await createStaff(app, ['approve_deposits'], admin);
  const queue = expectOk(
    await app.request('GET', `/api/backoffice/deposits?status=review&provider_id=${psp.id}`, { token: approver.token }),
    200,
  );
  const held = queue.items.find((d: { id: string }) => d.id === intent.id);
  expect(held).toMatchObject({
    status: 'review',
    customer_id: customer.id,
    review: { expected: { amount: '100.00', currency: 'USD' }, received: { amount: '90.00', currency: 'USD' } },
  });
  const from = new Date(Date.now() - 60_000).toISOString();
  const windowed = expectOk(
    await app.request('GET', `/api/backoffice/deposits?status=review&from=${encodeURIComponent(from)}`, {
      token: approver.token,
    }),
    200,
  );
  expect(windowed.items.map((d: { id: string }) => d.id)).toContain(intent.id);
  expectError(
    await app.request('GET', '/api/backoffice/deposits', { token: (await createStaff(app, ['view_customers'], admin)).token }),
    403,
    'FORBIDDEN',
  );
  const approved = expectOk(
    await app.request('POST', `/api/backoffice/deposits/${intent.id}/approve`, { token: approver.token, body: {} }),
    200,
  );
  expect(approved).toMatchObject({ status: 'completed', credited_amount: '90.00', decided_by: approver.id });
  expect((await accountState(app, wallet)).balance).toBe('90.00');
  expectError(
    await app.request('POST', `/api/backoffice/deposits/${intent.id}/approve`, { token: approver.token, body: {} }),
    409,
    'DEPOSIT_NOT_IN_REVIEW',
  );
  const audit = await sql(app, `select action from audit_entries where entity_id = ?`, [intent.id]);
  expect(audit).toEqual([{ action: 'deposit.approved' }]);
});

test('when a review is approved in another currency than the account, then the amount is converted as a transfer converts', async () => {
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  const intent = await pendingIntent(customer, 100, 'USD');
  expectOk(await sendCallback(app, psp.id, psp.secret, completed(intent, '100.00', 'EUR')), 200);
  const approved = expectOk(
    await app.request('POST', `/api/backoffice/deposits/${intent.id}/approve`, { token: admin, body: { amount: 50 } }),
    200,
  );
  // 50 EUR at the EURUSD bid, rounded down.
  expect(approved.credited_amount).toBe('55.00');
  expect((await accountState(app, wallet)).balance).toBe('55.00');
});

test('when staff reject a review, then it fails with the reason, nothing is credited, and it is audited', async () => {
  const customer = await createCustomer(app, admin);
  const intent = await pendingIntent(customer);
  expectOk(await sendCallback(app, psp.id, psp.secret, completed(intent, '1.00')), 200);
  const rejected = expectOk(
    await app.request('POST', `/api/backoffice/deposits/${intent.id}/reject`, { token: admin, body: { reason: 'Underpaid' } }),
    200,
  );
  expect(rejected).toMatchObject({ status: 'failed', reason: 'Underpaid' });
  expect(await depositRows(app, intent.id)).toEqual([]);
  expect(await sql(app, `select action from audit_entries where entity_id = ?`, [intent.id])).toEqual([
    { action: 'deposit.rejected' },
  ]);
});

test('when a completed deposit is charged back past the balance, then a negative row is booked, and withdrawals and transfers out are 409 ACCOUNT_NEGATIVE', async () => {
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  const live = expectOk(
    await openAccount(app, admin, customer.id, { kind: 'live', group_id: groupId, currency: 'USD' }),
    201,
  ).login;
  const intent = await pendingIntent(customer, 200);
  expectOk(await sendCallback(app, psp.id, psp.secret, completed(intent, '200.00')), 200);
  expectOk(await transfer(app, customer, wallet, live, 150), 200);
  const back = await sendCallback(app, psp.id, psp.secret, { ...completed(intent, '200.00'), status: 'charged_back' });
  expect(back.body).toMatchObject({ outcome: 'processed', deposit_status: 'charged_back' });
  expect(await depositRows(app, intent.id)).toEqual([
    { kind: 'deposit', amount: '200.00' },
    { kind: 'chargeback', amount: '-200.00' },
  ]);
  expect((await accountState(app, wallet)).balance).toBe('-150.00');
  expectError(await withdraw(app, customer, 10), 409, 'ACCOUNT_NEGATIVE');
  expectError(await transfer(app, customer, wallet, live, 10), 409, 'ACCOUNT_NEGATIVE');
  // Money may come back in: the live account pays the wallet back.
  expectOk(await transfer(app, customer, live, wallet, 150), 200);
  expect((await accountState(app, wallet)).balance).toBe('0.00');
  const events = await sql(app, `select type from domain_events where aggregate_id = ? order by seq`, [intent.id]);
  expect(events.map((e) => (e as { type: string }).type)).toEqual(['deposit.created', 'deposit.charged_back']);
});

test('when a completed deposit is refunded, then a deposit_refund row takes it back and the intent is refunded', async () => {
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  const intent = await pendingIntent(customer, 60);
  expectOk(await sendCallback(app, psp.id, psp.secret, completed(intent, '60.00')), 200);
  expect(
    (await sendCallback(app, psp.id, psp.secret, { ...completed(intent, '60.00'), status: 'refunded' })).body.deposit_status,
  ).toBe('refunded');
  expect((await accountState(app, wallet)).balance).toBe('0.00');
  expect((await depositRows(app, intent.id)).map((r) => r.kind)).toEqual(['deposit', 'deposit_refund']);
});

test('when the simulator provider is told an outcome, then it sends a real signed callback through the public route, and the same outcome again is a duplicate', async () => {
  const sim = await createProvider(app, admin, { adapter: 'simulator' });
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  const intent = await pendingIntent(customer, 75, 'USD', sim);
  expect(intent).not.toHaveProperty('redirect_url');
  const first = expectOk(
    await app.request('POST', `/simulator/payments/${intent.id}`, { token: admin, body: { outcome: 'completed' } }),
    200,
  );
  expect(first).toMatchObject({
    external_id: `sim-${intent.id}`,
    callback_status: 200,
    callback_body: { outcome: 'processed', deposit_status: 'completed' },
  });
  const again = expectOk(
    await app.request('POST', `/simulator/payments/${intent.id}`, { token: admin, body: { outcome: 'completed' } }),
    200,
  );
  expect(again.callback_body).toMatchObject({ outcome: 'duplicate' });
  expect((await accountState(app, wallet)).balance).toBe('75.00');
  expect(await inboundOutcomes(app, sim.id)).toEqual({ processed: 1, duplicate: 1 });
  const [call] = await sql<{ signature_valid: boolean; external_id: string }>(
    app,
    `select signature_valid, external_id from integration_inbound where integration_id = ? and outcome = 'processed'`,
    [sim.id],
  );
  expect(call).toEqual({ signature_valid: true, external_id: `sim-${intent.id}` });
  const notes = await waitFor('the completed-deposit notification', async () => {
    const page = expectOk(await app.request('GET', '/customers/me/notifications', { token: customer.token }), 200);
    return page.items.length ? page.items : undefined;
  });
  expect(notes[0]).toMatchObject({ type: 'deposit.completed', title: 'Deposit received' });
  await expectMail(customer, 'deposit_completed');
  const other = await pendingIntent(customer, 20);
  expectError(
    await app.request('POST', `/simulator/payments/${other.id}`, { token: admin, body: { outcome: 'completed' } }),
    409,
    'NOT_SIMULATED',
  );
  expectError(
    await app.request('POST', `/simulator/payments/${randomUUID()}`, { token: admin, body: { outcome: 'completed' } }),
    404,
    'NOT_FOUND',
  );
});

test('when a failed inbound call is reprocessed, then it applies once, and reprocessing again is 409', async () => {
  const customer = await createCustomer(app, admin);
  const wallet = await walletOf(app, customer);
  const intent = await pendingIntent(customer, 40);
  // A body that breaks the schema fails; a valid one naming an unknown intent fails too.
  const unknown = await sendCallback(app, psp.id, psp.secret, { ...completed(intent, '40.00'), intent_id: randomUUID() });
  expect(unknown.status).toBe(404);
  const [failed] = await sql<{ id: string }>(
    app,
    `select id from integration_inbound where integration_id = ? and outcome = 'failed' order by created_at desc limit 1`,
    [psp.id],
  );
  // The operator mends the cause (here: the stored body named the wrong intent), then reprocesses.
  await sql(app, `update integration_inbound set body = ? where id = ?`, [
    JSON.stringify(completed(intent, '40.00')),
    failed!.id,
  ]);
  const done = expectOk(
    await app.request('POST', `/api/admin/integrations/${psp.id}/inbound/${failed!.id}/reprocess`, { token: admin }),
    200,
  );
  expect(done).toMatchObject({ id: failed!.id, outcome: 'processed' });
  expect((await accountState(app, wallet)).balance).toBe('40.00');
  expectError(
    await app.request('POST', `/api/admin/integrations/${psp.id}/inbound/${failed!.id}/reprocess`, { token: admin }),
    409,
    'INBOUND_NOT_FAILED',
  );
  // The provider's retry of the same report is now a duplicate.
  expect((await sendCallback(app, psp.id, psp.secret, completed(intent, '40.00'))).body.outcome).toBe('duplicate');
  expect((await accountState(app, wallet)).balance).toBe('40.00');
  expect(await sql(app, `select action from audit_entries where entity_id = ?`, [failed!.id])).toEqual([
    { action: 'integration.inbound_reprocessed' },
  ]);
});

test('when an inbound call is older than 30 days, then the retention sweep deletes it and keeps younger ones', async () => {
  const provider = await createProvider(app, admin);
  const customer = await createCustomer(app, admin);
  const intent = await pendingIntent(customer, 100, 'USD', provider);
  expectOk(await sendCallback(app, provider.id, provider.secret, completed(intent)), 200);
  expectOk(await sendCallback(app, provider.id, provider.secret, completed(intent)), 200);
  const [oldest] = await sql<{ id: string }>(
    app,
    'select id from integration_inbound where integration_id = ? order by created_at limit 1',
    [provider.id],
  );
  await sql(app, `update integration_inbound set created_at = now() - interval '31 days' where id = ?`, [oldest!.id]);
  const em = app.runtime.services.orm.em.fork() as EntityManager;
  const ages = { outboxHours: 720, inboxHours: 168, webhookDeliveryHours: 720, mailHours: 720, reportDays: 7 };
  expect((await removeExpiredRows(em, ages, { batchSize: 100, budgetMs: 10_000 })).inbound).toBe(1);
  const left = await sql<{ id: string }>(app, 'select id from integration_inbound where integration_id = ?', [provider.id]);
  expect(left).toHaveLength(1);
  expect(left[0]!.id).not.toBe(oldest!.id);
});
