import { MailMessage } from '../../../src/entities/mail-message.entity';
import { RESET_ANSWER_FLOOR_MS, RESET_LIMITS, RESET_REQUESTED } from '../../../src/domain/customers/password-reset';
import { createCustomer, loginCustomer, type LoggedIn } from '../../helpers/identity';
import { decodedMessage } from '../../helpers/mail';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';

jest.setTimeout(60_000);

let smtp: SmtpSink;
let app: TestApp;
let addressCounter = 0;

beforeAll(async () => {
  smtp = await startSmtpSink();
  app = await startTestApp({
    label: 'pwreset',
    env: { SMTP_URL: smtp.url, PASSWORD_RESET_URL: 'https://portal.broker.test/reset' },
  });
});
afterAll(async () => {
  await app?.stop();
  await smtp?.close();
});

/** Each test asks from its own client address (TRUST_PROXY trusts loopback), so the per-address limit is its own. */
function freshAddress(): string {
  addressCounter += 1;
  return `198.51.100.${addressCounter}`;
}

function forgot(email: string, address: string) {
  return app.request('POST', '/customers/password-reset/forgot', { body: { email }, headers: { 'x-forwarded-for': address } });
}

/** Waits for the n-th reset mail to `email` and returns the token of its link. */
async function tokenFromMail(email: string, n = 1): Promise<string> {
  const mail = await waitFor(`reset mail ${n} to ${email}`, async () => smtp.received.filter((m) => m.to.includes(email))[n - 1]);
  const text = decodedMessage(mail.raw);
  const match = /https:\/\/portal\.broker\.test\/reset\?token=([A-Za-z0-9_-]+)/.exec(text);
  if (!match) throw new Error(`no reset link in ${text}`);
  return match[1]!;
}

const confirm = (token: string, new_password: string) =>
  app.request('POST', '/customers/password-reset/confirm', { body: { token, new_password } });

const NEW_PASSWORD = 'Velvet-harbour-lantern-93';

test('when a customer asks for a reset, then the mail arrives with a working single-use token, the password changes and every session ends', async () => {
  const customer: LoggedIn = await createCustomer(app);
  const address = freshAddress();
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

test('when a customer asked twice, then using one token consumes the other', async () => {
  const customer = await createCustomer(app);
  const address = freshAddress();
  await forgot(customer.email, address);
  await forgot(customer.email, address);
  const first = await tokenFromMail(customer.email, 1);
  const second = await tokenFromMail(customer.email, 2);
  expect(first).not.toBe(second);
  expect((await confirm(second, NEW_PASSWORD)).status).toBe(204);
  expect((await confirm(first, 'Another-quiet-meadow-58')).status).toBe(422);
});

test('when the new password breaks the policy, then 422 at new_password and the token still works', async () => {
  const customer = await createCustomer(app);
  await forgot(customer.email, freshAddress());
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
  await forgot(customer.email, freshAddress());
  const token = await tokenFromMail(customer.email);
  await sql(app, `update password_reset_tokens set expires_at = now() - interval '1 second' where customer_id = ?`, [
    customer.id,
  ]);
  const res = await confirm(token, NEW_PASSWORD);
  expect(res.status).toBe(422);
  expect(res.body.detail[0].loc).toEqual(['body', 'token']);
  expect((await confirm('not-a-token', NEW_PASSWORD)).status).toBe(422);
});

test('when the email is unknown, then the answer is the same 202, in about the same time, and nothing is queued', async () => {
  const customer = await createCustomer(app);
  const before = await app.runtime.services.orm.em.fork().count(MailMessage, {});
  const timed = async (email: string) => {
    const started = performance.now();
    const res = await forgot(email, freshAddress());
    return { res, ms: performance.now() - started };
  };
  const known: number[] = [];
  const unknown: number[] = [];
  for (let i = 0; i < 5; i++) {
    const k = await timed(customer.email);
    const u = await timed(`nobody-${i}@broker.test`);
    expect(u.res.status).toBe(k.res.status);
    expect(u.res.text).toBe(k.res.text);
    known.push(k.ms);
    unknown.push(u.ms);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[2]!;
  expect(Math.min(...known, ...unknown)).toBeGreaterThanOrEqual(RESET_ANSWER_FLOOR_MS - 5);
  expect(Math.abs(median(known) - median(unknown))).toBeLessThan(50);
  await waitFor('the five known-email mails', async () => smtp.received.filter((m) => m.to.includes(customer.email)).length >= 5);
  expect(await app.runtime.services.orm.em.fork().count(MailMessage, {})).toBe(before + 5);
});

test('when one email is asked for too often, then 429 with Retry-After, for a known email exactly as for an unknown one', async () => {
  const customer = await createCustomer(app);
  const answers = async (email: string) => {
    const out: Array<{ status: number; retryAfter: string | null }> = [];
    for (let i = 0; i <= RESET_LIMITS.email; i++) {
      const res = await forgot(email, freshAddress());
      out.push({ status: res.status, retryAfter: res.headers.get('retry-after') });
    }
    return out;
  };
  const known = await answers(customer.email);
  const unknown = await answers('nobody-throttled@broker.test');
  expect(known.map((a) => a.status)).toEqual([...Array(RESET_LIMITS.email).fill(202), 429]);
  expect(unknown.map((a) => a.status)).toEqual(known.map((a) => a.status));
  expect(Number(known.at(-1)!.retryAfter)).toBeGreaterThan(3000);
  expect(Number(unknown.at(-1)!.retryAfter)).toBeGreaterThan(3000);
});

test('when one address asks for many emails, then it is throttled too', async () => {
  const address = freshAddress();
  const statuses = await Promise.all(
    Array.from({ length: RESET_LIMITS.address + 2 }, (_, i) => forgot(`spray-${i}@broker.test`, address).then((r) => r.status)),
  );
  expect(statuses.filter((s) => s === 202)).toHaveLength(RESET_LIMITS.address);
  expect(statuses.filter((s) => s === 429)).toHaveLength(2);
});
