import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { RESET_MAIL_INTERVAL_SECONDS, RESET_REQUESTED, sendPasswordReset } from '../../../src/domain/identity/password-reset';
import { RESET_LIMITS } from '../../../src/domain/identity/reset-limits';
import { createCustomer, loginCustomer, type LoggedIn } from '../../helpers/identity';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';
import {
  RESET_URL,
  forgot as forgotFrom,
  mailQueueIdle,
  mailsTo,
  newAddress,
  tokenFromMail as tokenIn,
} from './password-reset-kit';

jest.setTimeout(60_000);

let smtp: SmtpSink;
let app: TestApp;

beforeAll(async () => {
  smtp = await startSmtpSink();
  app = await startTestApp({ label: 'pwreset', env: { SMTP_URL: smtp.url, PASSWORD_RESET_URL: RESET_URL } });
});
afterAll(async () => {
  await app?.stop();
  await smtp?.close();
});

const forgot = (email: string, address: string) => forgotFrom(app, email, address);
const tokenFromMail = (email: string, n = 1) => tokenIn(smtp, email, n);

/** Moves a customer's reset tokens back in time, as if the mail window had passed (the hour's throttle has not). */
async function mailWindowPassed(customerId: string): Promise<void> {
  await sql(
    app,
    `update password_reset_tokens set created_at = created_at - ? * interval '1 second' - interval '1 minute' where customer_id = ?`,
    [RESET_MAIL_INTERVAL_SECONDS, customerId],
  );
}

const confirm = (token: string, new_password: string) =>
  app.request('POST', '/customers/password-reset/confirm', { body: { token, new_password } });

const NEW_PASSWORD = 'Velvet-harbour-lantern-93';

test('when a customer asks for a reset, then the mail arrives with a working single-use token, the password changes and every session ends', async () => {
  const customer: LoggedIn = await createCustomer(app);
  const address = newAddress();
  const res = await forgot(customer.email.toUpperCase(), address);
  expect(res.status).toBe(202);
  expect(res.body).toEqual(RESET_REQUESTED);

  const token = await tokenFromMail(customer.email);
  const [row] = await sql<{ token_hash: string; expires_at: Date }>(
    app,
    'select token_hash, expires_at from password_reset_tokens where customer_id = ?',
    [customer.id],
  );
  expect(row!.token_hash).toMatch(/^[0-9a-f]{64}$/);
  expect(row!.token_hash).not.toContain(token);
  const validFor = new Date(row!.expires_at).getTime() - Date.now();
  expect(validFor).toBeGreaterThan(55 * 60_000);
  expect(validFor).toBeLessThanOrEqual(3600_000);
  const [mailRow] = await sql<{ row: string }>(
    app,
    'select row_to_json(m)::text as row from mail_messages m where to_address = ?',
    [customer.email],
  );
  expect(mailRow!.row).not.toContain(token);

  expect((await app.request('GET', '/auth/sessions', { token: customer.token })).status).toBe(200);
  expect((await confirm(token, NEW_PASSWORD)).status).toBe(204);

  // Every session is revoked; the old password is gone, the new one works.
  expect((await app.request('GET', '/auth/sessions', { token: customer.token })).status).toBe(401);
  expect((await app.request('POST', '/auth/refresh', { body: { refresh_token: customer.refreshToken } })).status).toBe(401);
  const old = await app.request('POST', '/api/customer/login', { body: { email: customer.email, password: customer.password } });
  expect(old.status).toBe(401);
  await loginCustomer(app, customer.email, NEW_PASSWORD);

  const [audit] = await sql<{ action: string; actor_type: string; after: unknown }>(
    app,
    'select action, actor_type, after from audit_entries where entity_id = ? and action = ?',
    [customer.id, 'customer.password_reset'],
  );
  expect(audit).toEqual({ action: 'customer.password_reset', actor_type: 'system', after: { sessions_revoked: 1 } });

  // Single use.
  const again = await confirm(token, 'Another-quiet-meadow-58');
  expect(again.status).toBe(422);
  expect(again.body.detail[0].loc).toEqual(['body', 'token']);
});

test('when a customer asks again after the mail window, then a second mail comes and using one token consumes the other', async () => {
  const customer = await createCustomer(app);
  const address = newAddress();
  await forgot(customer.email, address);
  const first = await tokenFromMail(customer.email, 1);
  await mailWindowPassed(customer.id);
  await forgot(customer.email, address);
  const second = await tokenFromMail(customer.email, 2);
  expect(first).not.toBe(second);
  expect((await confirm(second, NEW_PASSWORD)).status).toBe(204);
  expect((await confirm(first, 'Another-quiet-meadow-58')).status).toBe(422);
});

test('when a customer asks twice within the mail window, then both answers are the same 202 and one mail is sent', async () => {
  const customer = await createCustomer(app);
  const first = await forgot(customer.email, newAddress());
  const second = await forgot(customer.email, newAddress());
  expect([first.status, second.status]).toEqual([202, 202]);
  expect(second.text).toBe(first.text);
  await mailQueueIdle(app);
  expect(mailsTo(smtp, customer.email)).toHaveLength(1);
  const tokens = await sql(app, 'select id from password_reset_tokens where customer_id = ?', [customer.id]);
  expect(tokens).toHaveLength(1);
  // The one mail works.
  expect((await confirm(await tokenFromMail(customer.email), NEW_PASSWORD)).status).toBe(204);
});

test('when the new password breaks the policy, then 422 at new_password and the token still works', async () => {
  const customer = await createCustomer(app);
  await forgot(customer.email, newAddress());
  const token = await tokenFromMail(customer.email);
  const weak = await confirm(token, 'password123');
  expect(weak.status).toBe(422);
  expect(weak.body.detail[0].loc).toEqual(['body', 'new_password']);
  const short = await confirm(token, 'short');
  expect(short.status).toBe(422);
  expect(short.body.detail[0].loc).toEqual(['body', 'new_password']);
  expect((await confirm(token, NEW_PASSWORD)).status).toBe(204);
});

test('when the token is over an hour old, then it is refused', async () => {
  const customer = await createCustomer(app);
  await forgot(customer.email, newAddress());
  const token = await tokenFromMail(customer.email);
  await sql(app, `update password_reset_tokens set expires_at = now() - interval '1 second' where customer_id = ?`, [
    customer.id,
  ]);
  const res = await confirm(token, NEW_PASSWORD);
  expect(res.status).toBe(422);
  expect(res.body.detail[0].loc).toEqual(['body', 'token']);
  expect((await confirm('not-a-token', NEW_PASSWORD)).status).toBe(422);
});

/** Headers that differ between any two answers, whatever was asked. */
const PER_ANSWER_HEADERS = new Set(['date', 'x-request-id']);
const headersOf = (res: { headers: Headers }) =>
  [...res.headers.entries()].filter(([name]) => !PER_ANSWER_HEADERS.has(name)).sort(([a], [b]) => a.localeCompare(b));

test("when the email is unknown, then the answer is byte for byte a known email's and no mail is made or sent", async () => {
  const customer = await createCustomer(app);
  const unknownEmail = `nobody-${randomUUID()}@broker.test`;
  const known = await forgot(customer.email, newAddress());
  const unknown = await forgot(unknownEmail, newAddress());
  expect(known.status).toBe(202);
  expect(unknown.status).toBe(known.status);
  expect(unknown.text).toBe(known.text);
  expect(JSON.parse(known.text)).toEqual(RESET_REQUESTED);
  expect(headersOf(unknown)).toEqual(headersOf(known));

  // Both jobs have run (and the send job of the known one): the known email has its mail, the unknown none.
  await mailQueueIdle(app);
  await tokenFromMail(customer.email);
  expect(mailsTo(smtp, unknownEmail)).toHaveLength(0);
  expect(await sql(app, 'select id from mail_messages where to_address = ?', [unknownEmail])).toHaveLength(0);
});

test('when one address asks for one email too often, then 429 with Retry-After, for a known email exactly as for an unknown one', async () => {
  const customer = await createCustomer(app);
  const answers = async (email: string) => {
    const address = newAddress();
    const out: Array<{ status: number; retryAfter: string | null }> = [];
    for (let i = 0; i <= RESET_LIMITS.emailPerAddress; i++) {
      const res = await forgot(email, address);
      out.push({ status: res.status, retryAfter: res.headers.get('retry-after') });
    }
    return out;
  };
  const known = await answers(customer.email);
  const unknown = await answers('nobody-throttled@broker.test');
  expect(known.map((a) => a.status)).toEqual([...Array(RESET_LIMITS.emailPerAddress).fill(202), 429]);
  expect(unknown.map((a) => a.status)).toEqual(known.map((a) => a.status));
  expect(Number(known.at(-1)!.retryAfter)).toBeGreaterThan(3000);
  expect(Number(unknown.at(-1)!.retryAfter)).toBeGreaterThan(3000);
});

test("when a stranger's address has spent its budget on a customer's email, then the owner, from another address, still gets a working mail", async () => {
  const customer = await createCustomer(app);
  const stranger = newAddress();
  const statuses: number[] = [];
  for (let i = 0; i <= RESET_LIMITS.emailPerAddress; i++) statuses.push((await forgot(customer.email, stranger)).status);
  expect(statuses.at(-1)).toBe(429);
  // The stranger's requests sent the owner one mail (the mail window), not one each.
  await mailQueueIdle(app);
  expect(mailsTo(smtp, customer.email)).toHaveLength(1);

  // Ten minutes on, well inside the stranger's hour: the owner asks and gets a fresh link.
  await mailWindowPassed(customer.id);
  const owner = await forgot(customer.email, newAddress());
  expect(owner.status).toBe(202);
  const token = await tokenFromMail(customer.email, 2);
  expect((await confirm(token, NEW_PASSWORD)).status).toBe(204);
  // The stranger is still held off.
  expect((await forgot(customer.email, stranger)).status).toBe(429);
});

test('when one address asks for many emails, then it is throttled too', async () => {
  const address = newAddress();
  const statuses = await Promise.all(
    Array.from({ length: RESET_LIMITS.address + 2 }, (_, i) => forgot(`spray-${i}@broker.test`, address).then((r) => r.status)),
  );
  expect(statuses.filter((s) => s === 202)).toHaveLength(RESET_LIMITS.address);
  expect(statuses.filter((s) => s === 429)).toHaveLength(2);
});

test('when the reset job runs again for the same request (a retry, or two workers at once), then no second token and no second mail', async () => {
  const customer = await createCustomer(app);
  const services = app.runtime.services;
  const request = { request_id: randomUUID(), email: customer.email };
  const run = () =>
    sendPasswordReset(
      services.orm.em.fork() as EntityManager,
      { jobs: services.jobs, mailSecrets: services.mailSecrets, resetUrl: services.config.passwordResetUrl },
      request,
    );
  const outcomes = await Promise.all([run(), run()]);
  expect(outcomes.sort()).toEqual(['already_done', 'queued']);
  // Past the mail window the request's own key still says done.
  await mailWindowPassed(customer.id);
  expect(await run()).toBe('already_done');

  await mailQueueIdle(app);
  expect(mailsTo(smtp, customer.email)).toHaveLength(1);
  const tokens = await sql<{ request_id: string }>(app, 'select request_id from password_reset_tokens where customer_id = ?', [
    customer.id,
  ]);
  expect(tokens).toEqual([{ request_id: request.request_id }]);
});
