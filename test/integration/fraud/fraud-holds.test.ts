import { randomBytes } from 'node:crypto';
import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { decodedMessage } from '../../helpers/mail';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, setUpMarket } from '../../helpers/trading';
import { mailsTo, newAddress } from '../mail/password-reset-kit';
import { eventsOf, expectError, expectOk } from '../trading/trading-kit';

/**
 * The fraud rules at sign-up, promo redemption and bonus grants, and what a case's resolution
 * does with what they held: a sign-up in review is created close_only with a case; a redeem or
 * a grant in review is kept on hold with no credit until release_holds grants it, or a fraud
 * verdict voids it; forfeit_bonuses ends the customer's bonuses; the built-in rule on staff
 * changes of a verification level opens a case unless the staff user is on the exceptions list.
 */
jest.setTimeout(180_000);

const CONFIRM_URL = 'https://portal.broker.test/confirm';
let smtp: SmtpSink;
let app: TestApp;
let admin: string;
let groupId: string;

beforeAll(async () => {
  smtp = await startSmtpSink();
  app = await startTestApp({ label: 'fraudholds', env: { SMTP_URL: smtp.url, REGISTRATION_CONFIRM_URL: CONFIRM_URL } });
  admin = await adminToken(app);
  groupId = (await setUpMarket(app, admin)).groupId;
});
afterAll(async () => {
  await app?.stop();
  await smtp?.close();
});
afterEach(() => expectLedgerBalanced(app));

async function rule(body: Record<string, unknown>): Promise<string> {
  return expectOk(
    await app.request('POST', '/api/backoffice/fraud/rules', {
      token: admin,
      body: { match: 'all', position: 1, enabled: true, ...body },
    }),
    201,
    'rule',
  ).id;
}
const disable = (id: string) =>
  app.request('PATCH', `/api/backoffice/fraud/rules/${id}`, { token: admin, body: { enabled: false } });

async function program(terms: Record<string, unknown> = {}): Promise<string> {
  return expectOk(
    await app.request('POST', '/api/crm/bonus-programs', {
      token: admin,
      body: {
        name: 'Held 50',
        currency: 'USD',
        kind: 'fixed',
        amount: 50,
        group_ids: [groupId],
        trigger: 'promo_code',
        first_deposit_only: false,
        release: { mode: 'on_target', lots_per_unit: 0.1 },
        ...terms,
      },
    }),
    201,
    'programme',
  ).id;
}

async function promoCode(programId: string, terms: Record<string, unknown> = {}) {
  return expectOk(
    await app.request('POST', '/api/crm/promo-codes', {
      token: admin,
      body: {
        code: `H-${randomBytes(4).toString('hex').toUpperCase()}`,
        reward: { type: 'bonus', bonus_program_id: programId },
        ...terms,
      },
    }),
    201,
    'code',
  );
}

async function trader(deposit = 100): Promise<{ customer: LoggedIn; live: number }> {
  const customer = await createCustomer(app, admin);
  return { customer, live: await fundedAccount(app, admin, customer.id, groupId, deposit) };
}

async function creditOf(login: number): Promise<string> {
  return expectOk(await app.request('GET', `/api/crm/accounts/${login}`, { token: admin }), 200).credit;
}

async function bonusOf(customer: LoggedIn, id: string) {
  const mine = expectOk(await app.request('GET', '/customers/me/bonuses', { token: customer.token }), 200, 'bonuses');
  return mine.items.find((b: { id: string }) => b.id === id);
}

async function liveCase(customerId: string): Promise<{ id: string; reasons: Array<{ event: string }> }> {
  const [row] = await sql<{ id: string; reasons: Array<{ event: string }> }>(
    app,
    `select id, reasons from fraud_cases where customer_id = ? and status = 'open'`,
    [customerId],
  );
  return row!;
}

const resolve = (caseId: string, verdict: 'fraud' | 'legitimate', actions: string[]) =>
  app.request('POST', `/api/backoffice/fraud/cases/${caseId}/resolve`, {
    token: admin,
    body: { verdict, actions, note: 'Reviewed' },
  });

const redemption = async (id: string) =>
  (await sql<{ status: string }>(app, 'select status from promo_redemptions where id = ?', [id]))[0]!.status;

test('when a sign-up matches a block rule, then it is 403 FRAUD_BLOCKED; a review rule creates the customer close_only with a case and its device recorded', async () => {
  const domain = `held-${randomBytes(3).toString('hex')}.test`;
  const blocked = await rule({
    name: 'block sign-ups',
    event: 'signup',
    conditions: [{ field: 'customer.email_domain', op: 'eq', value: `blocked-${domain}` }],
    action: 'block',
  });
  const review = await rule({
    name: 'review sign-ups',
    event: 'signup',
    conditions: [{ field: 'customer.email_domain', op: 'eq', value: domain }],
    action: 'review',
  });
  const form = (email: string) => ({
    email,
    password: 'Amber-quarry-violin-58',
    first_name: 'Ada',
    last_name: 'Byron',
    country: 'DE',
  });
  try {
    const refused = await app.request('POST', '/customers/register', {
      body: form(`someone@blocked-${domain}`),
      headers: { 'x-forwarded-for': newAddress() },
    });
    expectError(refused, 403, 'FRAUD_BLOCKED');
    expect(JSON.stringify(refused.body)).not.toContain('block sign-ups');

    const email = `someone@${domain}`;
    const accepted = await app.request('POST', '/customers/register', {
      body: form(email),
      headers: { 'x-forwarded-for': newAddress(), 'x-device-id': 'signup-device-7' },
    });
    expect(accepted.status).toBe(202);
    const mail = await waitFor('the confirmation mail', async () => mailsTo(smtp, email)[0]);
    const token = /confirm\?token=([A-Za-z0-9_-]+)/.exec(decodedMessage(mail.raw))![1]!;
    const confirmed = expectOk(await app.request('POST', '/customers/register/confirm', { body: { token } }), 201);
    const me = expectOk(await app.request('GET', '/customers/me', { token: confirmed.access_token }), 200);
    expect(me.access).toBe('close_only');
    const held = await liveCase(me.id);
    expect(held.reasons.map((r) => r.event)).toEqual(['signup']);
    expect(
      await sql(app, `select 1 from fraud_signals where customer_id = ? and event = 'signup' and device_id = 'signup-device-7'`, [
        me.id,
      ]),
    ).toHaveLength(1);
    expect(
      await sql(app, `select 1 from fraud_evaluations where customer_id = ? and event = 'signup' and decision = 'review'`, [
        me.id,
      ]),
    ).toHaveLength(1);
  } finally {
    await disable(blocked);
    await disable(review);
  }
});

test('when a promo redeem is reviewed, then the redemption and its bonus are on hold with no credit, and release_holds grants them', async () => {
  const programId = await program();
  const c = await promoCode(programId);
  const { customer, live } = await trader();
  const review = await rule({
    name: 'review redeems',
    event: 'promo_redeem',
    conditions: [{ field: 'customer.id', op: 'eq', value: customer.id }],
    action: 'review',
  });
  try {
    const held = expectOk(
      await app.request('POST', '/customers/me/promo-codes/redeem', {
        token: customer.token,
        body: { code: c.code },
        headers: { 'x-device-id': 'promo-device-3' },
      }),
      201,
    );
    expect(held).toMatchObject({ status: 'on_hold', bonus_id: expect.any(String) });
    expect(await bonusOf(customer, held.bonus_id)).toMatchObject({ status: 'on_hold', amount: '50.00', login: live });
    expect(await creditOf(live)).toBe('0.00');
    expect(
      await sql(
        app,
        `select 1 from fraud_signals where customer_id = ? and event = 'promo_redeem' and device_id = 'promo-device-3'`,
        [customer.id],
      ),
    ).toHaveLength(1);
    const fraudCase = await liveCase(customer.id);
    expect(fraudCase.reasons.map((r) => r.event)).toContain('promo_redeem');

    expectOk(await resolve(fraudCase.id, 'legitimate', ['release_holds']), 200);
    expect(await redemption(held.id)).toBe('applied');
    expect(await bonusOf(customer, held.bonus_id)).toMatchObject({ status: 'active', amount: '50.00' });
    expect(await creditOf(live)).toBe('50.00');
    expect((await eventsOf(app, 'bonus.granted', held.bonus_id)).length).toBe(1);
  } finally {
    await disable(review);
  }
});

test('when a reviewed redeem meets a fraud verdict without release, then it is void, its bonus cancelled, and the code use given back; a block rule is 403', async () => {
  const programId = await program();
  const c = await promoCode(programId, { max_redemptions: 5 });
  const { customer, live } = await trader();
  const review = await rule({
    name: 'review redeems',
    event: 'promo_redeem',
    conditions: [{ field: 'customer.id', op: 'eq', value: customer.id }],
    action: 'review',
  });
  let held: { id: string; bonus_id: string };
  try {
    held = expectOk(
      await app.request('POST', '/customers/me/promo-codes/redeem', { token: customer.token, body: { code: c.code } }),
      201,
    );
  } finally {
    await disable(review);
  }
  const [used] = await sql<{ redemptions: number }>(app, 'select redemptions from promo_codes where id = ?', [c.id]);
  expect(used!.redemptions).toBe(1);
  expectOk(await resolve((await liveCase(customer.id)).id, 'fraud', []), 200);
  expect(await redemption(held.id)).toBe('void');
  expect(await bonusOf(customer, held.bonus_id)).toMatchObject({ status: 'cancelled', end_reason: 'fraud_review' });
  expect(await creditOf(live)).toBe('0.00');
  const [after] = await sql<{ redemptions: number }>(app, 'select redemptions from promo_codes where id = ?', [c.id]);
  expect(after!.redemptions).toBe(0);

  const other = await trader();
  const block = await rule({
    name: 'block redeems',
    event: 'promo_redeem',
    conditions: [{ field: 'customer.id', op: 'eq', value: other.customer.id }],
    action: 'block',
  });
  try {
    expectError(
      await app.request('POST', '/customers/me/promo-codes/redeem', { token: other.customer.token, body: { code: c.code } }),
      403,
      'FRAUD_BLOCKED',
    );
    expect(await sql(app, 'select 1 from promo_redemptions where customer_id = ?', [other.customer.id])).toEqual([]);
  } finally {
    await disable(block);
  }
});

test('when a bonus grant is reviewed, then a manual and a deposit bonus are on hold without credit until release_holds books them', async () => {
  const manual = await program({ trigger: 'manual', enabled: true });
  const onDeposit = await program({ trigger: 'deposit', kind: 'deposit_percent', percent: 10, amount: undefined, enabled: true });
  const { customer, live } = await trader(0);
  const review = await rule({
    name: 'review grants',
    event: 'bonus_grant',
    conditions: [{ field: 'customer.id', op: 'eq', value: customer.id }],
    action: 'review',
  });
  let byHand: { id: string };
  try {
    byHand = expectOk(
      await app.request('POST', `/api/crm/customers/${customer.id}/bonuses`, {
        token: admin,
        body: { program_id: manual, login: live },
        headers: { 'idempotency-key': `grant-${customer.id}` },
      }),
      201,
    );
    expect(byHand).toMatchObject({ status: 'on_hold', amount: '50.00' });
    expectOk(
      await app.request('POST', `/api/backoffice/accounts/${live}/deposits`, { token: admin, body: { amount: 200 } }),
      201,
    );
  } finally {
    await disable(review);
  }
  const [fromDeposit] = await sql<{ id: string; status: string }>(
    app,
    'select id, status from bonuses where customer_id = ? and program_id = ?',
    [customer.id, onDeposit],
  );
  expect(fromDeposit).toMatchObject({ status: 'on_hold' });
  expect(await creditOf(live)).toBe('0.00');
  expectOk(await resolve((await liveCase(customer.id)).id, 'legitimate', ['release_holds']), 200);
  expect(await bonusOf(customer, byHand.id)).toMatchObject({ status: 'active' });
  expect(await bonusOf(customer, fromDeposit!.id)).toMatchObject({ status: 'active', amount: '20.00' });
  expect(await creditOf(live)).toBe('70.00');
  // Programmes have no PATCH: the deposit programme stops here so the later tests' deposits grant nothing of it.
  await sql(app, 'update bonus_programs set enabled = false where id = ?', [onDeposit]);
});

test('when a case resolves with forfeit_bonuses, then the active and held bonuses are forfeited and the active credit leaves with credit_out', async () => {
  const manual = await program({ trigger: 'manual', enabled: true });
  // No deposit: the deposit programme of another test grants nothing here.
  const { customer, live } = await trader(0);
  const grant = (key: string) =>
    app.request('POST', `/api/crm/customers/${customer.id}/bonuses`, {
      token: admin,
      body: { program_id: manual, login: live },
      headers: { 'idempotency-key': key },
    });
  const active = expectOk(await grant(`a-${customer.id}`), 201);
  const review = await rule({
    name: 'review grants',
    event: 'bonus_grant',
    conditions: [{ field: 'customer.id', op: 'eq', value: customer.id }],
    action: 'review',
  });
  let held: { id: string };
  try {
    held = expectOk(await grant(`b-${customer.id}`), 201);
  } finally {
    await disable(review);
  }
  expect(held.id).not.toBe(active.id);
  expect(await creditOf(live)).toBe('50.00');
  expectOk(await resolve((await liveCase(customer.id)).id, 'fraud', ['forfeit_bonuses', 'release_holds']), 200);
  expect(await bonusOf(customer, active.id)).toMatchObject({ status: 'forfeited', end_reason: 'fraud' });
  expect(await bonusOf(customer, held.id)).toMatchObject({ status: 'forfeited' });
  expect(await creditOf(live)).toBe('0.00');
  const out = await sql<{ amount: string }>(
    app,
    `select l.amount::text as amount from ledger_entries l join accounts a on a.id = l.account_id
      where a.login = ? and l.kind = 'credit_out'`,
    [live],
  );
  expect(out.map((r) => r.amount)).toEqual(['-50.00']);
  expect(await eventsOf(app, 'bonus.forfeited', active.id)).toHaveLength(1);
  expect(await eventsOf(app, 'bonus.forfeited', held.id)).toHaveLength(1);
});

test('when the built-in verification rule is enabled, then a staff change of a level opens a case unless the staff user is on the exceptions list', async () => {
  const rules = expectOk(await app.request('GET', '/api/backoffice/fraud/rules', { token: admin }), 200);
  const builtin = (rules.items as Array<{ id: string; event: string; builtin: boolean; enabled: boolean }>).find(
    (r) => r.event === 'verification_change' && r.builtin,
  );
  expect(builtin).toMatchObject({ enabled: false });
  const first = await createCustomer(app, admin);
  const setLevel = (customerId: string, level: number) =>
    app.request('PATCH', `/api/crm/customers/${customerId}`, { token: admin, body: { verification_level: level } });
  // Shipped disabled: nothing happens.
  expectOk(await setLevel(first.id, 1), 200);
  expect(await sql(app, 'select 1 from fraud_cases where customer_id = ?', [first.id])).toEqual([]);

  expectOk(
    await app.request('PATCH', `/api/backoffice/fraud/rules/${builtin!.id}`, { token: admin, body: { enabled: true } }),
    200,
  );
  try {
    expectOk(await setLevel(first.id, 2), 200);
    const opened = await liveCase(first.id);
    expect(opened.reasons.map((r) => r.event)).toEqual(['verification_change']);
    const me = expectOk(await app.request('GET', '/customers/me', { token: first.token }), 200);
    expect(me.verification_level).toBe(2);

    const adminId = (await sql<{ id: string }>(app, `select id from staff_users where email = 'admin@broker.test'`))[0]!.id;
    expectOk(
      await app.request('PUT', '/api/backoffice/fraud/lists/verification_exceptions/items', {
        token: admin,
        body: { items: [adminId] },
      }),
      200,
    );
    const second = await createCustomer(app, admin);
    expectOk(await setLevel(second.id, 2), 200);
    expect(await sql(app, 'select 1 from fraud_cases where customer_id = ?', [second.id])).toEqual([]);
  } finally {
    await disable(builtin!.id);
    await app.request('PUT', '/api/backoffice/fraud/lists/verification_exceptions/items', { token: admin, body: { items: [] } });
  }
});

test('when an armed redeem is reviewed and released, then it goes back to armed with its bonus pending, and the qualifying deposit grants it', async () => {
  const programId = await program();
  const c = await promoCode(programId, { min_deposit: 100 });
  const { customer, live } = await trader(0);
  const review = await rule({
    name: 'review redeems',
    event: 'promo_redeem',
    conditions: [{ field: 'customer.id', op: 'eq', value: customer.id }],
    action: 'review',
  });
  let held: { id: string; bonus_id: string };
  try {
    held = expectOk(
      await app.request('POST', '/customers/me/promo-codes/redeem', { token: customer.token, body: { code: c.code } }),
      201,
    );
  } finally {
    await disable(review);
  }
  expect(held).toMatchObject({ status: 'on_hold' });
  expect(await bonusOf(customer, held.bonus_id)).toMatchObject({ status: 'on_hold', login: null });
  expectOk(await resolve((await liveCase(customer.id)).id, 'legitimate', ['release_holds']), 200);
  expect(await redemption(held.id)).toBe('armed');
  expect(await bonusOf(customer, held.bonus_id)).toMatchObject({ status: 'pending', amount: '50.00' });
  expect(await creditOf(live)).toBe('0.00');
  expectOk(await app.request('POST', `/api/backoffice/accounts/${live}/deposits`, { token: admin, body: { amount: 150 } }), 201);
  expect(await redemption(held.id)).toBe('applied');
  expect(await bonusOf(customer, held.bonus_id)).toMatchObject({ status: 'active', login: live });
  expect(await creditOf(live)).toBe('50.00');
});
