import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { removeExpiredRows } from '../../../src/domain/retention/retention';
import { REGISTRATION_ACCEPTED } from '../../../src/domain/crm/registration';
import { adminToken, createCustomer, type LoggedIn } from '../../helpers/identity';
import { decodedMessage } from '../../helpers/mail';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { mailsTo, newAddress } from '../mail/password-reset-kit';

jest.setTimeout(90_000);

const CONFIRM_URL = 'https://portal.broker.test/confirm';

let smtp: SmtpSink;
let app: TestApp;
let admin: string;

beforeAll(async () => {
  smtp = await startSmtpSink();
  app = await startTestApp({ label: 'registration', env: { SMTP_URL: smtp.url, REGISTRATION_CONFIRM_URL: CONFIRM_URL } });
  admin = await adminToken(app);
});
afterAll(async () => {
  await app?.stop();
  await smtp?.close();
});

const PASSWORD = 'Amber-quarry-violin-58';

function newEmail(): string {
  return `signup-${randomBytes(4).toString('hex')}@broker.test`;
}

function signUp(body: Record<string, unknown>, address: string, headers: Record<string, string> = {}) {
  return app.request('POST', '/customers/register', { body, headers: { 'x-forwarded-for': address, ...headers } });
}

function form(email: string, extra: Record<string, unknown> = {}) {
  return { email, password: PASSWORD, first_name: 'Grace', last_name: 'Hopper', country: 'DE', ...extra };
}

async function confirmTokenFor(email: string): Promise<string> {
  const mail = await waitFor(`confirmation mail to ${email}`, async () => mailsTo(smtp, email)[0]);
  const text = decodedMessage(mail.raw);
  const match = /https:\/\/portal\.broker\.test\/confirm\?token=([A-Za-z0-9_-]+)/.exec(text);
  if (!match) throw new Error(`no confirmation link in ${text}`);
  return match[1]!;
}

async function patchSettings(body: Record<string, unknown>) {
  const res = await app.request('PATCH', '/api/admin/settings', { token: admin, body });
  expect(res.status).toBe(200);
  return res.body;
}

test('when someone signs up and uses the mailed link, then a registered customer with a wallet exists and is logged in, once', async () => {
  const email = newEmail();
  const res = await signUp(form(email, { ref: 'PARTNER-7', promo_code: 'WELCOME10', phone: '+44 20 7946 0000' }), newAddress(), {
    'x-device-id': 'sdk-device-42',
  });
  expect(res.status).toBe(202);
  expect(res.body).toEqual(REGISTRATION_ACCEPTED);
  const token = await confirmTokenFor(email);
  expect(decodedMessage(mailsTo(smtp, email)[0]!.raw)).toContain('Confirm your registration');
  // Nothing exists until the link is used, and the token is stored only as a hash.
  expect(await sql(app, 'select id from customers where email = ?', [email])).toEqual([]);
  const [pending] = await sql<{ token_hash: string }>(app, 'select token_hash from pending_registrations where email = ?', [
    email,
  ]);
  expect(pending!.token_hash).not.toContain(token);

  const confirmed = await app.request('POST', '/customers/register/confirm', { body: { token } });
  expect(confirmed.status).toBe(201);
  expect(confirmed.body).toMatchObject({ access_token: expect.any(String), refresh_token: expect.any(String) });
  const me = await app.request('GET', '/customers/me', { token: confirmed.body.access_token });
  expect(me.status).toBe(200);
  expect(me.body).toMatchObject({
    email,
    lifecycle: 'registered',
    country: 'DE',
    partner_code: 'PARTNER-7',
    promo_code: 'WELCOME10',
    phone: '+44 20 7946 0000',
    ftd_at: null,
  });
  const [row] = await sql<{ signup_device_id: string; wallets: number }>(
    app,
    `select c.signup_device_id, (select count(*)::int from accounts a where a.customer_id = c.id and a.kind = 'wallet') as wallets
       from customers c where c.email = ?`,
    [email],
  );
  expect(row).toEqual({ signup_device_id: 'sdk-device-42', wallets: 1 });
  // The password chosen at sign-up logs in.
  expect((await app.request('POST', '/api/customer/login', { body: { email, password: PASSWORD } })).status).toBe(200);

  const again = await app.request('POST', '/customers/register/confirm', { body: { token } });
  expect(again.status).toBe(422);
  expect(again.body.detail[0].loc).toEqual(['body', 'token']);
});

test("when someone signs up with a partner's code as ref, in any case, then the customer is attributed to that partner; an unknown ref attributes nothing", async () => {
  const plan = await app.request('POST', '/api/crm/ib-plans', {
    token: admin,
    body: { name: 'Sign-up plan', currency: 'USD', basis: 'per_lot', levels: [{ level: 1, value: 5 }], charge: 'daily' },
  });
  expect(plan.status).toBe(201);
  const owner = await createCustomer(app, admin);
  const code = `REF-${randomBytes(3).toString('hex').toUpperCase()}`;
  const created = await app.request('POST', '/api/crm/partners', {
    token: admin,
    body: { customer_id: owner.id, plan_id: plan.body.id, code },
  });
  expect(created.status).toBe(201);

  const email = newEmail();
  expect((await signUp(form(email, { ref: code.toLowerCase() }), newAddress())).status).toBe(202);
  const confirmed = await app.request('POST', '/customers/register/confirm', { body: { token: await confirmTokenFor(email) } });
  expect(confirmed.status).toBe(201);
  const me = await app.request('GET', '/customers/me', { token: confirmed.body.access_token });
  expect(me.body).toMatchObject({ partner_id: created.body.id, affiliate_id: code, partner_code: code.toLowerCase() });

  const stranger = newEmail();
  expect((await signUp(form(stranger, { ref: 'NO-SUCH-PARTNER' }), newAddress())).status).toBe(202);
  const other = await app.request('POST', '/customers/register/confirm', { body: { token: await confirmTokenFor(stranger) } });
  expect(other.status).toBe(201);
  const them = await app.request('GET', '/customers/me', { token: other.body.access_token });
  expect(them.body).toMatchObject({ partner_id: null, affiliate_id: null, partner_code: 'NO-SUCH-PARTNER' });
});

test('when a taken email signs up, then the answer is the same and its owner is told someone tried, with no link', async () => {
  const owner: LoggedIn = await createCustomer(app, admin);
  const res = await signUp(form(owner.email.toUpperCase()), newAddress());
  expect(res.status).toBe(202);
  expect(res.body).toEqual(REGISTRATION_ACCEPTED);
  const mail = await waitFor('the attempt mail', async () => mailsTo(smtp, owner.email)[0]);
  const text = decodedMessage(mail.raw);
  expect(text).toContain('Someone tried to register with your email');
  expect(text).not.toContain(CONFIRM_URL);
  expect(await sql(app, 'select id from pending_registrations where email = ?', [owner.email])).toEqual([]);
});

test('when the password is weak, then 422 at password and nothing is mailed', async () => {
  const email = newEmail();
  const res = await signUp(form(email, { password: 'password12' }), newAddress());
  expect(res.status).toBe(422);
  expect(res.body.detail[0].loc).toEqual(['body', 'password']);
  expect(await sql(app, 'select id from pending_registrations where email = ?', [email])).toEqual([]);
});

test('when one address passes the hourly limit, then every further attempt is 429, refused ones having counted', async () => {
  await patchSettings({ registration: { max_per_ip_per_hour: 3 } });
  try {
    const address = newAddress();
    expect((await signUp(form(newEmail()), address)).status).toBe(202);
    expect((await signUp(form(newEmail(), { password: 'short-pw-1' }), address)).status).toBe(422);
    expect((await signUp(form(newEmail()), address)).status).toBe(202);
    const refused = await signUp(form(newEmail()), address);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('RATE_LIMITED');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another address is not held by it.
    expect((await signUp(form(newEmail()), newAddress())).status).toBe(202);
  } finally {
    await patchSettings({ registration: { max_per_ip_per_hour: 5 } });
  }
});

test('when a country is blocked, then its sign-ups and leads are 403, the answer counts its customers, and the change is audited with an event', async () => {
  const existing = await createCustomer(app, admin);
  await sql(app, `update customers set country = 'KP' where id = ?`, [existing.id]);
  const settings = await patchSettings({ registration: { blocked_countries: ['KP', 'IR'] } });
  expect(settings.affected_customers).toBe(1);
  expect(settings.registration).toMatchObject({ blocked_countries: ['KP', 'IR'], max_per_ip_per_hour: 5 });

  const refused = await signUp(form(newEmail(), { country: 'KP' }), newAddress());
  expect(refused.status).toBe(403);
  expect(refused.body.code).toBe('COUNTRY_NOT_ALLOWED');
  const lead = await app.request('POST', '/api/crm/leads', {
    token: admin,
    body: { email: newEmail(), first_name: 'Kim', last_name: 'Lee', country: 'IR' },
  });
  expect(lead.status).toBe(403);
  expect(lead.body.code).toBe('COUNTRY_NOT_ALLOWED');
  // The customer already there is untouched and still logs in.
  expect(
    (await app.request('POST', '/api/customer/login', { body: { email: existing.email, password: existing.password } })).status,
  ).toBe(200);

  // An allow list refuses every other country.
  await patchSettings({ registration: { blocked_countries: [], allowed_countries: ['FR'] } });
  expect((await signUp(form(newEmail(), { country: 'DE' }), newAddress())).status).toBe(403);
  expect((await signUp(form(newEmail(), { country: 'FR' }), newAddress())).status).toBe(202);
  await patchSettings({ registration: { allowed_countries: null } });

  const audit = await sql<{ before: any; after: any }>(
    app,
    `select before, after from audit_entries where action = 'settings.updated' order by created_at`,
  );
  expect(
    audit.some(
      (a) => a.after.registration.blocked_countries.includes('KP') && a.before.registration.blocked_countries.length === 0,
    ),
  ).toBe(true);
  const events = await sql<{ data: any }>(app, `select data from domain_events where type = 'settings.updated'`);
  expect(events.length).toBe(audit.length);
});

test('when maintenance is on, then customers may read and log in but not act, staff are unaffected, and it ends when switched off', async () => {
  const customer = await createCustomer(app, admin);
  const until = new Date(Date.now() + 600_000).toISOString();
  const settings = await patchSettings({ maintenance: { enabled: true, message: 'Back soon', until } });
  expect(settings.maintenance).toEqual({ enabled: true, message: 'Back soon', until });
  try {
    const refused = await app.request('POST', '/customers/me/transfer', {
      token: customer.token,
      body: { from_login: 1, to_login: 2, amount: '1.00' },
    });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ code: 'MAINTENANCE', detail: 'Back soon' });
    const retry = Number(refused.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(500);
    expect(retry).toBeLessThanOrEqual(600);
    expect((await signUp(form(newEmail()), newAddress())).status).toBe(503);

    expect((await app.request('GET', '/customers/me', { token: customer.token })).status).toBe(200);
    expect((await app.request('GET', '/customers/me/accounts', { token: customer.token })).status).toBe(200);
    const login = await app.request('POST', '/api/customer/login', {
      body: { email: customer.email, password: customer.password },
    });
    expect(login.status).toBe(200);
    expect((await app.request('GET', '/api/crm/customers', { token: admin })).status).toBe(200);
    expect(
      (
        await app.request('POST', '/api/crm/leads', {
          token: admin,
          body: { email: newEmail(), first_name: 'A', last_name: 'B' },
        })
      ).status,
    ).toBe(201);
  } finally {
    await patchSettings({ maintenance: { enabled: false } });
  }
  expect((await signUp(form(newEmail()), newAddress())).status).toBe(202);
});

test('when a sign-up was never confirmed, then retention deletes it a week on, and keeps one whose link still works', async () => {
  const stale = newEmail();
  const fresh = newEmail();
  expect((await signUp(form(stale), newAddress())).status).toBe(202);
  expect((await signUp(form(fresh), newAddress())).status).toBe(202);
  await sql(
    app,
    `update pending_registrations set created_at = now() - interval '8 days', expires_at = now() - interval '7 days' where email = ?`,
    [stale],
  );
  const em = app.runtime.services.orm.em.fork() as EntityManager;
  const removed = await removeExpiredRows(em, app.config.retention, { batchSize: 100, budgetMs: 30_000 });
  expect(removed.registrations).toBeGreaterThanOrEqual(1);
  expect(await sql(app, 'select email from pending_registrations where email in (?, ?)', [stale, fresh])).toEqual([
    { email: fresh },
  ]);
});
