import { randomUUID } from 'node:crypto';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { setUpMarket } from '../../helpers/trading';
import { setLevelTerms } from '../compliance/compliance-kit';
import { walletOf } from '../money/money-kit';
import { expect422, expectError, expectOk, openAccount } from '../trading/trading-kit';
import { createIntent, createProvider, newSecret, sendCallback } from './payments-kit';

/**
 * Payment providers (admin), what a customer may pay with, and deposit intents: the request's
 * rules (provider bounds and currencies, the verification level's daily limit, the target
 * account, Idempotency-Key, unknown fields) and expiry by the scheduled sweep.
 */
jest.setTimeout(120_000);

let app: TestApp;
let admin: string;
let alice: LoggedIn;
let bob: LoggedIn;
let groupId: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'psp-providers' });
  admin = await adminToken(app);
  ({ groupId } = await setUpMarket(app, admin));
  alice = await createCustomer(app, admin);
  bob = await createCustomer(app, admin);
});
afterAll(() => app?.stop());

describe('payment providers', () => {
  test('when the admin creates a provider, then it answers it without the secret, seals the secret, audits and lists it in the registry', async () => {
    const { id, secret, body } = await createProvider(app, admin, { allowed_ips: ['127.0.0.1/32'] });
    expect(body).toMatchObject({
      id,
      kind: 'psp',
      adapter: 'generic_hmac',
      currencies: ['USD', 'EUR'],
      min_amount: '10.00',
      max_amount: '5000.00',
      fee: { type: 'none', borne_by: 'broker' },
      allowed_ips: ['127.0.0.1/32'],
      enabled: true,
      previous_secret_expires_at: null,
    });
    expect(JSON.stringify(body)).not.toContain(secret.slice(6, 20));
    const [row] = await sql<{ secret_sealed: string }>(app, 'select secret_sealed from integrations where id = ?', [id]);
    expect(row!.secret_sealed).not.toContain(secret.slice(6, 20));
    expect(row!.secret_sealed.startsWith('v2:')).toBe(true);
    const audit = await sql(app, `select action from audit_entries where entity_id = ?`, [id]);
    expect(audit).toEqual([{ action: 'payment_provider.created' }]);
    const registry = expectOk(await app.request('GET', '/api/admin/integrations', { token: admin }), 200);
    expect(registry.items.find((i: { id: string }) => i.id === id)).toMatchObject({
      id,
      kind: 'psp',
      adapter: 'generic_hmac',
      enabled: true,
      last_inbound_at: null,
      last_error: null,
    });
    expectOk(await app.request('GET', `/api/admin/payment-providers/${id}`, { token: admin }), 200);
  });

  test('when the body is wrong, then each rule answers 422 at its field', async () => {
    const post = (body: Record<string, unknown>) => app.request('POST', '/api/admin/payment-providers', { token: admin, body });
    const good = {
      name: 'X',
      kind: 'psp',
      adapter: 'simulator',
      currencies: ['USD'],
      min_amount: 10,
      max_amount: 100,
      fee: { type: 'none', value: 0, borne_by: 'broker' },
      callback_secret: newSecret(),
      enabled: true,
    };
    expect422(await post({ ...good, adapter: 'paypal' }), ['body', 'adapter']);
    expect422(await post({ ...good, currencies: ['usd'] }), ['body', 'currencies', 0]);
    expect422(await post({ ...good, callback_secret: 'short' }), ['body', 'callback_secret']);
    expect422(await post({ ...good, max_amount: 5 }), ['body', 'max_amount']);
    expect422(await post({ ...good, allowed_ips: ['not-an-ip'] }), ['body', 'allowed_ips', 0]);
    expect422(await post({ ...good, fee: { type: 'bribe', value: 1, borne_by: 'broker' } }), ['body', 'fee', 'type']);
  });

  test('when a staff user lacks manage_payments, then the provider routes are 403, and the admin holds the new permissions', async () => {
    const clerk = await createStaff(app, ['view_customers'], admin);
    expectError(await app.request('GET', '/api/admin/payment-providers', { token: clerk.token }), 403, 'FORBIDDEN');
    const roles = expectOk(await app.request('GET', '/api/admin/roles', { token: admin }), 200);
    const builtIn = (roles.items as Array<{ name: string; permissions: string[] }>).find((r) => r.name === 'admin')!;
    expect(builtIn.permissions).toEqual(expect.arrayContaining(['manage_payments', 'approve_deposits', 'manage_integrations']));
  });

  test('when the secret is rotated, then callbacks signed with the old one still verify for 24 hours, and after that window only the new one', async () => {
    const { id, secret: old } = await createProvider(app, admin);
    const fresh = newSecret();
    const patched = expectOk(
      await app.request('PATCH', `/api/admin/payment-providers/${id}`, { token: admin, body: { callback_secret: fresh } }),
      200,
    );
    const until = Date.parse(patched.previous_secret_expires_at);
    expect(until - Date.now()).toBeGreaterThan(23.9 * 3600 * 1000);
    expect(until - Date.now()).toBeLessThanOrEqual(24 * 3600 * 1000);
    const audit = await sql<{ after: Record<string, unknown> }>(
      app,
      `select "after" from audit_entries where entity_id = ? and action = 'payment_provider.updated'`,
      [id],
    );
    expect(audit[0]!.after.secret_changed).toBe(true);
    expect(JSON.stringify(audit)).not.toContain(fresh.slice(6, 20));
    // An unknown intent is 404 after the signature passed: the signature check is what is under test.
    const body = { external_id: 'x', intent_id: randomUUID(), status: 'failed', amount: 10, currency: 'USD' };
    expect((await sendCallback(app, id, old, body)).status).toBe(404);
    expect((await sendCallback(app, id, fresh, body)).status).toBe(404);
    await sql(app, `update integrations set previous_secret_expires_at = now() - interval '1 second' where id = ?`, [id]);
    expectError(await sendCallback(app, id, old, body), 401, 'SIGNATURE_INVALID');
    expect((await sendCallback(app, id, fresh, body)).status).toBe(404);
  });

  test('when a provider no deposit names is deleted, then it is gone; one that deposits name is 409 PROVIDER_IN_USE', async () => {
    const unused = await createProvider(app, admin);
    expect((await app.request('DELETE', `/api/admin/payment-providers/${unused.id}`, { token: admin })).status).toBe(204);
    expectError(await app.request('GET', `/api/admin/payment-providers/${unused.id}`, { token: admin }), 404, 'NOT_FOUND');
    const used = await createProvider(app, admin);
    expectOk(await createIntent(app, alice, { provider_id: used.id, amount: 20, currency: 'USD' }), 201);
    expectError(await app.request('DELETE', `/api/admin/payment-providers/${used.id}`, { token: admin }), 409, 'PROVIDER_IN_USE');
  });

  test("when a customer lists payment methods, then only enabled providers taking one of its accounts' currencies show, with those currencies", async () => {
    const carol = await createCustomer(app, admin);
    const jpyOnly = await createProvider(app, admin, { currencies: ['JPY'] });
    const off = await createProvider(app, admin, { enabled: false });
    const usd = await createProvider(app, admin, { currencies: ['USD', 'JPY'] });
    const items = expectOk(await app.request('GET', '/customers/me/payment-methods', { token: carol.token }), 200)
      .items as Array<{
      provider_id: string;
      currencies: string[];
    }>;
    const ids = items.map((i) => i.provider_id);
    expect(ids).not.toContain(jpyOnly.id);
    expect(ids).not.toContain(off.id);
    expect(items.find((i) => i.provider_id === usd.id)!.currencies).toEqual(['USD']);
    expectError(await app.request('GET', '/customers/me/payment-methods', { token: admin }), 403, 'FORBIDDEN');
  });
});

describe('deposit intents', () => {
  let psp: { id: string; secret: string };
  beforeAll(async () => {
    psp = await createProvider(app, admin, { min_amount: 10, max_amount: 1000, currencies: ['USD'] });
  });

  test('when a customer asks to deposit, then a pending intent for its wallet expiring in 30 minutes is created, with its event', async () => {
    const wallet = await walletOf(app, alice);
    const res = await createIntent(app, alice, { provider_id: psp.id, amount: 125.5, currency: 'USD' });
    const intent = expectOk(res, 201);
    expect(intent).toMatchObject({ status: 'pending', amount: '125.50', currency: 'USD', login: wallet, provider_id: psp.id });
    const ttl = Date.parse(intent.expires_at) - Date.parse(intent.created_at);
    expect(ttl).toBeGreaterThan(29 * 60_000);
    expect(ttl).toBeLessThanOrEqual(30 * 60_000 + 1000);
    const events = await sql(app, `select type from domain_events where aggregate_id = ?`, [intent.id]);
    expect(events).toEqual([{ type: 'deposit.created' }]);
    expect(intent).not.toHaveProperty('redirect_url');
    expectOk(await app.request('GET', `/customers/me/deposits/${intent.id}`, { token: alice.token }), 200);
    const paged = await createProvider(app, admin, { payment_page_url: 'https://pay.example.com/checkout' });
    const redirected = expectOk(await createIntent(app, alice, { provider_id: paged.id, amount: 20, currency: 'USD' }), 201);
    expect(redirected.redirect_url).toBe(`https://pay.example.com/checkout?intent_id=${redirected.id}`);
    expectError(await app.request('GET', `/customers/me/deposits/${intent.id}`, { token: bob.token }), 404, 'NOT_FOUND');
    const mine = expectOk(await app.request('GET', '/customers/me/deposits', { token: alice.token }), 200);
    expect(mine.items.map((d: { id: string }) => d.id)).toContain(intent.id);
    const theirs = expectOk(await app.request('GET', '/customers/me/deposits', { token: bob.token }), 200);
    expect(theirs.items.map((d: { id: string }) => d.id)).not.toContain(intent.id);
  });

  test('when the same Idempotency-Key is sent again, then the first answer is replayed and one intent exists; another body is 422', async () => {
    const key = randomUUID();
    const first = expectOk(await createIntent(app, bob, { provider_id: psp.id, amount: 50, currency: 'USD' }, key), 201);
    const again = await createIntent(app, bob, { provider_id: psp.id, amount: 50, currency: 'USD' }, key);
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await createIntent(app, bob, { provider_id: psp.id, amount: 51, currency: 'USD' }, key)).status).toBe(422);
    const [count] = await sql<{ n: number }>(app, 'select count(*)::int as n from deposit_intents where customer_id = ?', [
      bob.id,
    ]);
    expect(count!.n).toBe(1);
  });

  test('when the request breaks a rule, then it is 422 at its field and nothing is created', async () => {
    const before = await sql<{ n: number }>(app, 'select count(*)::int as n from deposit_intents');
    expect422(await createIntent(app, alice, { provider_id: psp.id, amount: 5, currency: 'USD' }), ['body', 'amount']);
    expect422(await createIntent(app, alice, { provider_id: psp.id, amount: 1000.01, currency: 'USD' }), ['body', 'amount']);
    expect422(await createIntent(app, alice, { provider_id: psp.id, amount: 50, currency: 'EUR' }), ['body', 'currency']);
    expect422(
      await createIntent(app, alice, { provider_id: psp.id, amount: 50, currency: 'USD', stop_loss: 1 }),
      ['body', 'stop_loss'],
      'extra_forbidden',
    );
    expect422(await createIntent(app, alice, { provider_id: randomUUID(), amount: 50, currency: 'USD' }), [
      'body',
      'provider_id',
    ]);
    const after = await sql<{ n: number }>(app, 'select count(*)::int as n from deposit_intents');
    expect(after[0]!.n).toBe(before[0]!.n);
  });

  test("when the verification level's max_deposit_per_day would be passed, then the intent is 422 at amount", async () => {
    const dave = await createCustomer(app, admin);
    await setLevelTerms(app, admin, 0, { max_deposit_per_day: 100 });
    try {
      expect422(await createIntent(app, dave, { provider_id: psp.id, amount: 100.01, currency: 'USD' }), ['body', 'amount']);
      expectOk(await createIntent(app, dave, { provider_id: psp.id, amount: 100, currency: 'USD' }), 201);
    } finally {
      await setLevelTerms(app, admin, 0, {});
    }
  });

  test("when login names the customer's own live account, then it is the target; another customer's login is 404", async () => {
    const live = expectOk(
      await openAccount(app, admin, alice.id, { kind: 'live', group_id: groupId, currency: 'USD' }),
      201,
    ).login;
    const intent = expectOk(
      await createIntent(app, alice, { provider_id: psp.id, amount: 20, currency: 'USD', login: live }),
      201,
    );
    expect(intent.login).toBe(live);
    expectError(
      await createIntent(app, bob, { provider_id: psp.id, amount: 20, currency: 'USD', login: live }),
      404,
      'NOT_FOUND',
    );
  });

  test('when an intent passes its expires_at, then the scheduled sweep expires it, and a late completed callback is ignored', async () => {
    const intent = expectOk(await createIntent(app, alice, { provider_id: psp.id, amount: 30, currency: 'USD' }), 201);
    await sql(app, `update deposit_intents set expires_at = now() - interval '1 second' where id = ?`, [intent.id]);
    await waitFor(
      'the sweep to expire the intent',
      async () =>
        (await sql<{ status: string }>(app, 'select status from deposit_intents where id = ?', [intent.id]))[0]?.status ===
        'expired',
      40_000,
    );
    const res = await sendCallback(app, psp.id, psp.secret, {
      external_id: `late-${intent.id}`,
      intent_id: intent.id,
      status: 'completed',
      amount: '30.00',
      currency: 'USD',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'processed', deposit_status: 'expired' });
    const rows = await sql(app, `select 1 from ledger_entries where reference_id = ?`, [intent.id]);
    expect(rows).toHaveLength(0);
    expect(
      app.logs.some(
        (l) => l.msg === 'deposit transition ignored: not allowed from its current state' && l.intent_id === intent.id,
      ),
    ).toBe(true);
  });
});

test('when a customer cancels a pending deposit, then it is cancelled, a second cancel is 409, and a later payment report is ignored', async () => {
  const psp = await createProvider(app, admin);
  const intent = expectOk(await createIntent(app, alice, { provider_id: psp.id, amount: 20, currency: 'USD' }), 201);
  expectError(await app.request('POST', `/customers/me/deposits/${intent.id}/cancel`, { token: bob.token }), 404, 'NOT_FOUND');
  expect(
    expectOk(await app.request('POST', `/customers/me/deposits/${intent.id}/cancel`, { token: alice.token }), 200).status,
  ).toBe('cancelled');
  expectError(
    await app.request('POST', `/customers/me/deposits/${intent.id}/cancel`, { token: alice.token }),
    409,
    'DEPOSIT_NOT_PENDING',
  );
  const late = await sendCallback(app, psp.id, psp.secret, {
    external_id: 'c1',
    intent_id: intent.id,
    status: 'completed',
    amount: '20.00',
    currency: 'USD',
  });
  expect(late.body).toMatchObject({ outcome: 'processed', deposit_status: 'cancelled' });
  expect(await sql(app, 'select 1 from ledger_entries where reference_id = ?', [intent.id])).toHaveLength(0);
});

describe('the integrations registry', () => {
  test('when a psp is registered there, then it is a payment provider with the same id, its secret sealed and never answered', async () => {
    const secret = newSecret();
    const created = expectOk(
      await app.request('POST', '/api/admin/integrations', {
        token: admin,
        body: {
          kind: 'psp',
          adapter: 'generic_hmac',
          name: 'Registry PSP',
          config: { currencies: ['USD'], min_amount: 5, max_amount: 500 },
          secrets: { callback_secret: secret },
        },
      }),
      201,
    );
    expect(created).toMatchObject({
      kind: 'psp',
      adapter: 'generic_hmac',
      enabled: true,
      last_inbound_at: null,
      last_error: null,
    });
    expect(JSON.stringify(created)).not.toContain(secret.slice(6, 20));
    const provider = expectOk(await app.request('GET', `/api/admin/payment-providers/${created.id}`, { token: admin }), 200);
    expect(provider).toMatchObject({ id: created.id, currencies: ['USD'], min_amount: '5.00', max_amount: '500.00' });
    // The registry's secret is the provider's callback secret.
    const body = { external_id: 'r1', intent_id: randomUUID(), status: 'failed', amount: 5, currency: 'USD' };
    expect((await sendCallback(app, created.id, secret, body)).status).toBe(404);
    const after = expectOk(await app.request('GET', `/api/admin/integrations/${created.id}`, { token: admin }), 200);
    expect(after.last_inbound_at).not.toBeNull();
    expect(after.last_error).toContain('No deposit intent');
  });

  test('when a psp body breaks the provider rules, then it is 422 at the config or secret field', async () => {
    const post = (body: Record<string, unknown>) => app.request('POST', '/api/admin/integrations', { token: admin, body });
    const base = { kind: 'psp', adapter: 'generic_hmac', name: 'Bad PSP', secrets: { callback_secret: newSecret() } };
    expect422(await post({ ...base, config: { currencies: ['USD'], min_amount: 5 } }), ['body', 'config', 'max_amount']);
    expect422(await post({ ...base, config: { currencies: ['USD'], min_amount: 5, max_amount: 50 }, secrets: {} }), [
      'body',
      'secrets',
      'callback_secret',
    ]);
    expect422(await post({ ...base, adapter: 'paypal', config: { currencies: ['USD'], min_amount: 5, max_amount: 50 } }), [
      'body',
      'adapter',
    ]);
  });

  test('when another kind is registered, changed and removed, then each step answers, is audited, and needs manage_integrations', async () => {
    const crm = expectOk(
      await app.request('POST', '/api/admin/integrations', {
        token: admin,
        body: { kind: 'crm', adapter: 'hubspot', name: 'CRM', config: { portal: 42 }, secrets: { api_key: 'k-123' } },
      }),
      201,
    );
    expect(crm).toMatchObject({ kind: 'crm', config: { portal: 42 } });
    const listed = expectOk(await app.request('GET', '/api/admin/integrations?kind=crm', { token: admin }), 200);
    expect(listed.items.map((i: { id: string }) => i.id)).toEqual([crm.id]);
    const changed = expectOk(
      await app.request('PATCH', `/api/admin/integrations/${crm.id}`, {
        token: admin,
        body: { enabled: false, secrets: { api_key: 'k-456' } },
      }),
      200,
    );
    expect(changed.enabled).toBe(false);
    expect(changed.previous_secret_expires_at).not.toBeNull();
    const log = expectOk(await app.request('GET', `/api/admin/integrations/${crm.id}/inbound`, { token: admin }), 200);
    expect(log).toMatchObject({ items: [], total: 0 });
    const clerk = await createStaff(app, ['manage_payments'], admin);
    expectError(await app.request('GET', '/api/admin/integrations', { token: clerk.token }), 403, 'FORBIDDEN');
    expect((await app.request('DELETE', `/api/admin/integrations/${crm.id}`, { token: admin })).status).toBe(204);
    const audit = await sql<{ action: string; after: unknown }>(
      app,
      'select action, "after" from audit_entries where entity_id = ? order by created_at',
      [crm.id],
    );
    expect(audit.map((a) => a.action)).toEqual(['integration.created', 'integration.updated', 'integration.deleted']);
    expect(JSON.stringify(audit)).not.toContain('k-456');
  });
});
