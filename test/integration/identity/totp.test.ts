import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp, type TestResponse } from '../../helpers/test-app';
import {
  awayFromStepEdge,
  codeAt,
  enrolTotp,
  expectTokenPair,
  login as loginAs,
  newAddress,
  sql,
  wrongCode,
  type Enrolled,
  type Kind,
} from './auth-kit';

let app: TestApp;
let admin: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'idtotp', env: { ROLE: 'api' } });
  admin = await adminToken(app);
});
afterAll(() => app?.stop());

/** Every secret, URL and code this file handles: none may ever reach the logs. */
const sensitive: string[] = [];
const sixDigitCodes: string[] = [];

function remember(e: Enrolled): Enrolled {
  sensitive.push(e.secret, e.otpauthUrl, ...e.backupCodes, ...e.backupCodes.map((c) => c.replace(/-/g, '')));
  sixDigitCodes.push(e.enablingCode);
  return e;
}

function code(secret: string, steps = 0): string {
  const c = codeAt(secret, steps);
  sixDigitCodes.push(c);
  return c;
}

interface Account extends LoggedIn {
  kind: Kind;
  /** This test's own client address, so throttle counters never cross tests. */
  address: string;
}

async function customerAccount(): Promise<Account> {
  return { ...(await createCustomer(app, admin)), kind: 'customer', address: newAddress() };
}

function login(who: Account, totp_code?: string, password = who.password): Promise<TestResponse> {
  return loginAs(
    app,
    who.kind,
    { email: who.email, password, ...(totp_code === undefined ? {} : { totp_code }) },
    { address: who.address },
  );
}

async function sessionsInDb(who: Account): Promise<number> {
  const rows = await sql<{ n: string }>(app, 'select count(*) as n from sessions where principal_id = ?', [who.id]);
  return Number(rows[0]!.n);
}

/** Clears the replay marker, so only the ±1 step window decides (used to test the window on its own). */
async function clearReplayMarker(who: Account): Promise<void> {
  await sql(app, `update ${who.kind === 'user' ? 'staff_users' : 'customers'} set totp_last_step = null where id = ?`, [who.id]);
}

function expectNoTokens(res: TestResponse): void {
  expect(res.text).not.toMatch(/access_token|refresh_token|eyJ|rt_/);
}

function expectRefused(res: TestResponse): void {
  if (res.status !== 401) throw new Error(`expected 401, got ${res.status} ${res.text}`);
  expectNoTokens(res);
}

test('when TOTP is set up, then the answer is exactly the base32 secret and an otpauth URL that carries it', async () => {
  const c = await customerAccount();
  const res = await app.request('POST', '/auth/totp/setup', { token: c.token });
  expect(res.status).toBe(200);
  expect(Object.keys(res.body).sort()).toEqual(['otpauth_url', 'secret']);
  const { secret, otpauth_url } = res.body;
  sensitive.push(secret, otpauth_url);
  expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
  const url = new URL(otpauth_url);
  expect(url.protocol).toBe('otpauth:');
  expect(url.host).toBe('totp');
  expect(url.searchParams.get('secret')).toBe(secret);
  expect(decodeURIComponent(url.pathname)).toContain(c.email);
  // Set up is not enabled: the password alone still logs in.
  expectTokenPair(await login(c));
});

test('when TOTP is enabled with a valid code, then ten distinct backup codes come back once and login needs a code', async () => {
  const c = await customerAccount();
  const setup = await app.request('POST', '/auth/totp/setup', { token: c.token });
  sensitive.push(setup.body.secret, setup.body.otpauth_url);
  const bad = await app.request('POST', '/auth/totp/enable', { token: c.token, body: { code: wrongCode(setup.body.secret) } });
  expect(bad.status).toBe(422);
  expect(bad.body.detail[0].loc).toEqual(['body', 'code']);
  expectTokenPair(await login(c));

  await awayFromStepEdge();
  const res = await app.request('POST', '/auth/totp/enable', { token: c.token, body: { code: code(setup.body.secret) } });
  expect(res.status).toBe(200);
  expect(Object.keys(res.body)).toEqual(['backup_codes']);
  const codes: string[] = res.body.backup_codes;
  sensitive.push(...codes);
  expect(codes).toHaveLength(10);
  expect(new Set(codes).size).toBe(10);
  for (const c2 of codes) expect(c2.replace(/[^a-z0-9]/gi, '').length).toBeGreaterThanOrEqual(10);
  expect((await app.request('GET', '/api/customer/me', { token: c.token })).body.totp_enabled).toBe(true);

  // Once only: neither setup nor enable can be repeated while enabled.
  expect((await app.request('POST', '/auth/totp/setup', { token: c.token })).status).toBe(409);
  const again = await app.request('POST', '/auth/totp/enable', { token: c.token, body: { code: code(setup.body.secret, 1) } });
  expect(again.status).toBe(409);
  expect(again.text).not.toContain('backup_codes');
  expect((await login(c)).status).toBe(202);
});

test('when setup is called twice, then only the latest secret can enable TOTP', async () => {
  const c = await customerAccount();
  const first = (await app.request('POST', '/auth/totp/setup', { token: c.token })).body;
  const second = (await app.request('POST', '/auth/totp/setup', { token: c.token })).body;
  sensitive.push(first.secret, first.otpauth_url, second.secret, second.otpauth_url);
  expect(second.secret).not.toBe(first.secret);
  await awayFromStepEdge();
  expect((await app.request('POST', '/auth/totp/enable', { token: c.token, body: { code: code(first.secret) } })).status).toBe(
    422,
  );
  const ok = await app.request('POST', '/auth/totp/enable', { token: c.token, body: { code: code(second.secret) } });
  expect(ok.status).toBe(200);
  sensitive.push(...ok.body.backup_codes);
});

test('when TOTP is enabled, then the secret is stored sealed and the backup codes only as hashes', async () => {
  const c = await customerAccount();
  const e = remember(await enrolTotp(app, c));
  const [row] = await sql<{ totp_secret: string | null; totp_pending_secret: string | null }>(
    app,
    'select totp_secret, totp_pending_secret from customers where id = ?',
    [c.id],
  );
  expect(row!.totp_secret).toEqual(expect.any(String));
  expect(row!.totp_secret).not.toContain(e.secret);
  expect(row!.totp_pending_secret).toBeNull();
  const stored = JSON.stringify(await sql(app, 'select * from totp_backup_codes where principal_id = ?', [c.id]));
  expect((await sql(app, 'select id from totp_backup_codes where principal_id = ?', [c.id])).length).toBe(10);
  for (const b of e.backupCodes) {
    expect(stored).not.toContain(b);
    expect(stored).not.toContain(b.replace(/-/g, ''));
  }
});

test('when a TOTP account logs in without a code, then it is 202 TOTP_REQUIRED with no token and no session', async () => {
  const c = await customerAccount();
  remember(await enrolTotp(app, c));
  const before = await sessionsInDb(c);
  const res = await login(c);
  expect(res.status).toBe(202);
  expect(Object.keys(res.body).sort()).toEqual(['code', 'detail']);
  expect(res.body.code).toBe('TOTP_REQUIRED');
  expect(typeof res.body.detail).toBe('string');
  expectNoTokens(res);
  expect(await sessionsInDb(c)).toBe(before);
});

test('when a TOTP account is asked for its code many times, then those answers are not counted as failures', async () => {
  const c = await customerAccount();
  const e = remember(await enrolTotp(app, c));
  for (let i = 0; i < 8; i++) expect((await login(c)).status).toBe(202);
  await awayFromStepEdge();
  expectTokenPair(await login(c, code(e.secret)));
});

test('when a TOTP account sends wrong or malformed codes, then each is 401 with no token, and guessing is throttled', async () => {
  const c = await customerAccount();
  const e = remember(await enrolTotp(app, c));
  const before = await sessionsInDb(c);
  for (const bad of [wrongCode(e.secret), '12345', '1234567', 'abcdef', 'aaaa-bbbb-cccc-dddd']) {
    sixDigitCodes.push(bad);
    expectRefused(await login(c, bad));
  }
  expect(await sessionsInDb(c)).toBe(before);
  // Five wrong codes from one address: that address must wait, even with a right code.
  await awayFromStepEdge();
  const right = code(e.secret);
  const throttled = await login(c, right);
  expect(throttled.status).toBe(429);
  expect(throttled.body.code).toBe('RATE_LIMITED');
  expectNoTokens(throttled);
  // The owner, from elsewhere, is not locked out; and the throttled attempt did not use the code up.
  const elsewhere = await loginAs(
    app,
    'customer',
    { email: c.email, password: c.password, totp_code: right },
    { address: newAddress() },
  );
  expectTokenPair(elsewhere);
});

test('when the password is wrong but the code is right, then it is 401 and the code is not used up', async () => {
  const c = await customerAccount();
  const e = remember(await enrolTotp(app, c));
  await awayFromStepEdge();
  const now = code(e.secret);
  const res = await login(c, now, 'wrong-password-123');
  expectRefused(res);
  expect(res.body.code).toBe('INVALID_CREDENTIALS');
  expectTokenPair(await login(c, now));
});

test('when codes of neighbouring steps are sent, then one step either side is accepted and two steps are not', async () => {
  const c = await customerAccount();
  const e = remember(await enrolTotp(app, c)); // enrolTotp enabled with the previous step's code: accepted
  await clearReplayMarker(c);
  await awayFromStepEdge(8_000);
  expectRefused(await login(c, code(e.secret, -2)));
  expectRefused(await login(c, code(e.secret, 2)));
  expectRefused(await login(c, code(e.secret, -3)));
  expectRefused(await login(c, code(e.secret, 3)));
  expectTokenPair(await login(c, code(e.secret, -1)));
  expectTokenPair(await login(c, code(e.secret, 1)));
});

test('when a code of the next step is sent without any reset, then it is accepted', async () => {
  const c = await customerAccount();
  const e = remember(await enrolTotp(app, c));
  await awayFromStepEdge();
  expectTokenPair(await login(c, code(e.secret, 1)));
});

test('when a code is used twice, then the second use is refused (no replay), also of the code that enabled TOTP', async () => {
  const c = await customerAccount();
  const setup = (await app.request('POST', '/auth/totp/setup', { token: c.token })).body;
  sensitive.push(setup.secret, setup.otpauth_url);
  await awayFromStepEdge(8_000);
  const enabling = code(setup.secret);
  const enabled = await app.request('POST', '/auth/totp/enable', { token: c.token, body: { code: enabling } });
  expect(enabled.status).toBe(200);
  sensitive.push(...enabled.body.backup_codes);
  // The code that turned TOTP on has been used.
  expectRefused(await login(c, enabling));
  const next = code(setup.secret, 1);
  expectTokenPair(await login(c, next));
  expectRefused(await login(c, next));
  expectRefused(await login(c, next));
});

test('when two logins race with the same fresh code, then exactly one gets tokens', async () => {
  const c = await customerAccount();
  const e = remember(await enrolTotp(app, c));
  await awayFromStepEdge();
  const fresh = code(e.secret);
  const answers = await Promise.all([login(c, fresh), login(c, fresh)]);
  expect(answers.map((a) => a.status).sort()).toEqual([200, 401]);
  for (const a of answers.filter((x) => x.status === 401)) expectNoTokens(a);
});

test('when ten logins race with the same fresh code, then exactly one gets tokens', async () => {
  const c = await customerAccount();
  const e = remember(await enrolTotp(app, c));
  await awayFromStepEdge();
  const fresh = code(e.secret);
  const answers = await Promise.all(Array.from({ length: 10 }, () => login(c, fresh)));
  const statuses = answers.map((a) => a.status);
  expect(statuses.filter((s) => s === 200)).toHaveLength(1);
  // The losers are refused: 401, or 429 once the in-flight attempts fill the throttle window.
  expect(statuses.filter((s) => s === 401 || s === 429)).toHaveLength(9);
  for (const a of answers.filter((x) => x.status !== 200)) expectNoTokens(a);
  expect(await sessionsInDb(c)).toBe(2); // createCustomer's login and the one winner
});

test('when backup codes are used, then each works exactly once and only for its own account', async () => {
  const c = await customerAccount();
  const e = remember(await enrolTotp(app, c));
  const other = await customerAccount();
  const o = remember(await enrolTotp(app, other));
  expectRefused(await login(c, o.backupCodes[0]!));
  for (const b of e.backupCodes) {
    expectTokenPair(await login(c, b));
    expectRefused(await login(c, b));
  }
  // The other account's codes were never used up by those attempts.
  expectTokenPair(await login(other, o.backupCodes[0]!));
});

test('when several logins race with one backup code, then exactly one gets tokens', async () => {
  const c = await customerAccount();
  const e = remember(await enrolTotp(app, c));
  const answers = await Promise.all(Array.from({ length: 5 }, () => login(c, e.backupCodes[3]!)));
  expect(answers.map((a) => a.status).sort()).toEqual([200, 401, 401, 401, 401]);
});

test('when TOTP is disabled with a current code, then login needs only the password and the backup codes are gone', async () => {
  const c = await customerAccount();
  const e = remember(await enrolTotp(app, c));
  const wrong = wrongCode(e.secret);
  sixDigitCodes.push(wrong);
  const refused = await app.request('POST', '/auth/totp/disable', { token: c.token, body: { code: wrong } });
  expect(refused.status).toBe(422);
  expect((await login(c)).status).toBe(202);

  await awayFromStepEdge();
  const res = await app.request('POST', '/auth/totp/disable', { token: c.token, body: { code: code(e.secret) } });
  expect(res.status).toBe(204);
  expect((await app.request('GET', '/api/customer/me', { token: c.token })).body.totp_enabled).toBe(false);
  expectTokenPair(await login(c));
  expect(await sql(app, 'select id from totp_backup_codes where principal_id = ?', [c.id])).toHaveLength(0);
  const [row] = await sql<{ totp_secret: string | null }>(app, 'select totp_secret from customers where id = ?', [c.id]);
  expect(row!.totp_secret).toBeNull();
  expect((await app.request('POST', '/auth/totp/disable', { token: c.token, body: { code: code(e.secret, 1) } })).status).toBe(
    409,
  );
});

test('when TOTP is disabled with a backup code, then it works once, and a code already used cannot disable it', async () => {
  const c = await customerAccount();
  const e = remember(await enrolTotp(app, c));
  await awayFromStepEdge();
  const used = code(e.secret);
  expectTokenPair(await login(c, used));
  expect((await app.request('POST', '/auth/totp/disable', { token: c.token, body: { code: used } })).status).toBe(422);
  expectTokenPair(await login(c, e.backupCodes[0]!));
  expect((await app.request('POST', '/auth/totp/disable', { token: c.token, body: { code: e.backupCodes[0]! } })).status).toBe(
    422,
  );
  expect((await app.request('POST', '/auth/totp/disable', { token: c.token, body: { code: e.backupCodes[1]! } })).status).toBe(
    204,
  );
  expectTokenPair(await login(c));
});

test('when TOTP is enabled again after disabling, then only the new secret counts', async () => {
  const c = await customerAccount();
  const old = remember(await enrolTotp(app, c));
  expect((await app.request('POST', '/auth/totp/disable', { token: c.token, body: { code: old.backupCodes[0]! } })).status).toBe(
    204,
  );
  const fresh = remember(await enrolTotp(app, c));
  expect(fresh.secret).not.toBe(old.secret);
  await awayFromStepEdge();
  expectRefused(await login(c, old.backupCodes[1]!));
  const stale = code(old.secret);
  // Two random secrets share the current code about once in a million runs.
  expect(stale).not.toBe(code(fresh.secret));
  expectRefused(await login(c, stale));
  expectTokenPair(await login(c, code(fresh.secret)));
});

test('when a staff user enables TOTP, then the staff login asks for and checks the code the same way', async () => {
  const staff: Account = { ...(await createStaff(app, ['view_customers'], admin)), kind: 'user', address: newAddress() };
  const e = remember(await enrolTotp(app, staff));
  const users = await app.request('GET', '/api/admin/users', { token: admin });
  expect(users.body.items.find((u: { id: string }) => u.id === staff.id).totp_enabled).toBe(true);
  const required = await login(staff);
  expect(required.status).toBe(202);
  expect(required.body.code).toBe('TOTP_REQUIRED');
  expectNoTokens(required);
  const wrong = wrongCode(e.secret);
  sixDigitCodes.push(wrong);
  expectRefused(await login(staff, wrong));
  await awayFromStepEdge();
  const ok = code(e.secret);
  expectTokenPair(await login(staff, ok));
  expectRefused(await login(staff, ok));
  expectTokenPair(await login(staff, e.backupCodes[9]!));
});

test('when all of the above has run, then no TOTP secret, URL, code or backup code is in the logs', () => {
  expect(sensitive.length).toBeGreaterThan(20);
  expect(sixDigitCodes.length).toBeGreaterThan(20);
  const logs = JSON.stringify(app.logs);
  expect(app.logs.length).toBeGreaterThan(50);
  for (const s of sensitive) expect(logs).not.toContain(s);
  // A six-digit code must not appear on its own; inside a longer number (a timestamp) it is not a code.
  for (const c of sixDigitCodes) expect(logs).not.toMatch(new RegExp(`(?<![0-9])${c}(?![0-9])`));
});
