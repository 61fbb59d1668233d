import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { ADMIN, adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp, type TestResponse } from '../../helpers/test-app';
import { expectTokenPair, login, median, newAddress, sql, type Kind } from './auth-kit';

/** PHC string: `$argon2id$v=19$<params in any order>$<salt>$<hash>`. */
const ARGON2 = /^\$argon2id\$v=19\$([a-z]=\d+(?:,[a-z]=\d+)*)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

let app: TestApp;
let admin: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'idpasswords', env: { ROLE: 'api' } });
  admin = await adminToken(app);
});
afterAll(() => app?.stop());

function unknownEmail(): string {
  return `nobody-${randomBytes(4).toString('hex')}@broker.test`;
}

function attempt(kind: Kind, email: string, password: string, address: string): Promise<TestResponse> {
  return login(app, kind, { email, password }, { address });
}

function expectInvalid(res: TestResponse): void {
  if (res.status !== 401) throw new Error(`expected 401, got ${res.status} ${res.text}`);
  expect(res.body).toEqual({ detail: expect.any(String), code: 'INVALID_CREDENTIALS' });
}

function expectThrottled(res: TestResponse): void {
  if (res.status !== 429) throw new Error(`expected 429, got ${res.status} ${res.text}`);
  expect(res.body.code).toBe('RATE_LIMITED');
  expect(typeof res.body.detail).toBe('string');
  expect(res.text).not.toMatch(/access_token|refresh_token/);
  const retryAfter = res.headers.get('retry-after');
  expect(retryAfter).toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(15 * 60);
}

/** The parts of an answer a client could compare to tell two failures apart. */
function visible(res: TestResponse) {
  return {
    status: res.status,
    body: res.body,
    contentType: res.headers.get('content-type'),
    wwwAuthenticate: res.headers.get('www-authenticate'),
    retryAfter: res.headers.get('retry-after'),
  };
}

describe('password storage', () => {
  test('when staff and customers are created, then their passwords are stored as salted argon2id of at least m=19 MiB, t=2, p=1', async () => {
    const c1 = await createCustomer(app, admin);
    const c2 = await createCustomer(app, admin);
    const staff = await createStaff(app, ['view_customers'], admin);
    const hashes = [
      ...(await sql<{ password_hash: string }>(app, 'select password_hash from staff_users where email in (?, ?)', [
        ADMIN.email,
        staff.email,
      ])),
      ...(await sql<{ password_hash: string }>(app, 'select password_hash from customers where id in (?, ?)', [c1.id, c2.id])),
    ].map((r) => r.password_hash);
    expect(hashes).toHaveLength(4);
    for (const hash of hashes) {
      const m = ARGON2.exec(hash);
      if (!m) throw new Error(`not an argon2id hash: ${hash.slice(0, 30)}...`);
      const params = Object.fromEntries(m[1]!.split(',').map((kv) => [kv[0]!, Number(kv.slice(2))]));
      expect(params.m).toBeGreaterThanOrEqual(19_456);
      expect(params.t).toBeGreaterThanOrEqual(2);
      expect(params.p).toBeGreaterThanOrEqual(1);
      expect(Buffer.from(m[2]!, 'base64').length).toBeGreaterThanOrEqual(16);
      expect(Buffer.from(m[3]!, 'base64').length).toBeGreaterThanOrEqual(16);
      for (const password of [ADMIN.password, staff.password, c1.password]) expect(hash).not.toContain(password);
    }
    // The two customers share a password (the factory's) but not a hash.
    expect(c1.password).toBe(c2.password);
    expect(new Set(hashes).size).toBe(4);
  });
});

describe('no account enumeration', () => {
  test.each<Kind>(['user', 'customer'])(
    'when a %s login names an unknown email or gives a wrong password, then the answers are identical',
    async (kind) => {
      const who = kind === 'user' ? await createStaff(app, [], admin) : await createCustomer(app, admin);
      const wrong = await attempt(kind, who.email, 'not-the-password-1', newAddress());
      const unknown = await attempt(kind, unknownEmail(), 'not-the-password-1', newAddress());
      expectInvalid(wrong);
      expect(visible(unknown)).toEqual(visible(wrong));
    },
  );

  test('when a deactivated account logs in with its right password, then the answer is that of a wrong password', async () => {
    const c = await createCustomer(app, admin);
    await sql(app, 'update customers set is_active = false where id = ?', [c.id]);
    const inactive = await attempt('customer', c.email, c.password, newAddress());
    const wrong = await attempt('customer', (await createCustomer(app, admin)).email, 'not-the-password-1', newAddress());
    expectInvalid(inactive);
    expect(visible(inactive)).toEqual(visible(wrong));
  });

  test('when an unknown email is tried, then it costs about as much as a wrong password', async () => {
    const c = await createCustomer(app, admin);
    // Warm both paths once (the first unknown email may build the dummy hash).
    expectInvalid(await attempt('customer', unknownEmail(), 'not-the-password-1', newAddress()));
    expectInvalid(await attempt('customer', c.email, 'not-the-password-1', newAddress()));
    const wrongMs: number[] = [];
    const unknownMs: number[] = [];
    for (let i = 0; i < 7; i++) {
      // Interleaved, each from an address of its own, so load and throttling hit both alike.
      let t = performance.now();
      expectInvalid(await attempt('customer', c.email, `not-the-password-${i}`, newAddress()));
      wrongMs.push(performance.now() - t);
      t = performance.now();
      expectInvalid(await attempt('customer', unknownEmail(), `not-the-password-${i}`, newAddress()));
      unknownMs.push(performance.now() - t);
    }
    const [wrong, unknown] = [median(wrongMs), median(unknownMs)];
    expect(unknown).toBeGreaterThanOrEqual(0.5 * wrong);
    expect(wrong).toBeGreaterThanOrEqual(0.5 * unknown);
    // Sanity: a password check is real work (argon2id at 19 MiB), not a lookup.
    expect(wrong).toBeGreaterThan(5);
  });
});

describe('failed-login throttling', () => {
  async function failFive(kind: Kind, email: string, address: string): Promise<void> {
    for (let i = 0; i < 5; i++) expectInvalid(await attempt(kind, email, `wrong-password-${i}`, address));
  }

  test('when one address fails five times on an account, then the sixth attempt is 429 with Retry-After, even with the right password', async () => {
    const c = await createCustomer(app, admin);
    const attacker = newAddress();
    await failFive('customer', c.email, attacker);
    expectThrottled(await attempt('customer', c.email, 'wrong-password-6', attacker));
    expectThrottled(await attempt('customer', c.email, c.password, attacker));
  });

  test('when an account is throttled for one address, then its owner from another address still logs in', async () => {
    const c = await createCustomer(app, admin);
    const attacker = newAddress();
    await failFive('customer', c.email, attacker);
    expectThrottled(await attempt('customer', c.email, c.password, attacker));
    expectTokenPair(await attempt('customer', c.email, c.password, newAddress()));
    // A wrong password from a third address is an ordinary failure there, not yet throttled.
    expectInvalid(await attempt('customer', c.email, 'wrong-password-x', newAddress()));
    // And the attacker's address stays throttled after the owner's success elsewhere.
    expectThrottled(await attempt('customer', c.email, c.password, attacker));
  });

  test('when many wrong passwords for one account arrive at once from one address, then no more than five are tried', async () => {
    const c = await createCustomer(app, admin);
    const attacker = newAddress();
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => attempt('customer', c.email, `wrong-password-${i}`, attacker)),
    );
    const tried = answers.filter((a) => a.status === 401);
    const refused = answers.filter((a) => a.status === 429);
    expect(tried.length + refused.length).toBe(30);
    expect(tried.length).toBeLessThanOrEqual(5);
    for (const r of refused) expectThrottled(r);
    expectThrottled(await attempt('customer', c.email, c.password, attacker));
    expectTokenPair(await attempt('customer', c.email, c.password, newAddress()));
  });

  test('when right passwords arrive, at once or one after another, then none of them counts as a failure', async () => {
    const c = await createCustomer(app, admin);
    const address = newAddress();
    // A burst no larger than the limit is never refused, though its attempts are in flight together.
    const burst = await Promise.all(Array.from({ length: 5 }, () => attempt('customer', c.email, c.password, address)));
    expect(burst.map((a) => a.status)).toEqual(Array(5).fill(200));
    for (let i = 0; i < 12; i++) expectTokenPair(await attempt('customer', c.email, c.password, address));
    await failFive('customer', c.email, address);
    expectThrottled(await attempt('customer', c.email, c.password, address));
  });

  test('when many successful logins come from one address, then they do not use up the address allowance', async () => {
    const address = newAddress();
    const c = await createCustomer(app, admin);
    for (let i = 0; i < 35; i++) expectTokenPair(await attempt('customer', c.email, c.password, address));
    expectInvalid(await attempt('customer', unknownEmail(), 'password123456', address));
  });

  test('when the failures spell the email in different cases, then they count against one account', async () => {
    const c = await createCustomer(app, admin);
    const address = newAddress();
    const spellings = [c.email, c.email.toUpperCase(), ` ${c.email}`, c.email.replace(/^./, (x) => x.toUpperCase()), c.email];
    for (const email of spellings) expectInvalid(await attempt('customer', email, 'wrong-password-1', address));
    expectThrottled(await attempt('customer', c.email.toUpperCase(), c.password, address));
  });

  test('when an unknown email fails five times, then it is throttled exactly like a real account', async () => {
    const address = newAddress();
    const email = unknownEmail();
    await failFive('customer', email, address);
    const c = await createCustomer(app, admin);
    const realAddress = newAddress();
    await failFive('customer', c.email, realAddress);
    const unknown = await attempt('customer', email, 'wrong-password-6', address);
    const known = await attempt('customer', c.email, 'wrong-password-6', realAddress);
    expectThrottled(unknown);
    // Retry-After counts down by the second, so only its presence is compared.
    expect({ ...visible(unknown), retryAfter: 'set' }).toEqual({ ...visible(known), retryAfter: 'set' });
  });

  test('when a login succeeds after failures, then the account-and-address counter starts again', async () => {
    const c = await createCustomer(app, admin);
    const address = newAddress();
    for (let i = 0; i < 4; i++) expectInvalid(await attempt('customer', c.email, `wrong-password-${i}`, address));
    expectTokenPair(await attempt('customer', c.email, c.password, address));
    // Without the reset the second of these would already be refused (4 + 2 > 5).
    await failFive('customer', c.email, address);
    expectThrottled(await attempt('customer', c.email, c.password, address));
  });

  test('when staff logins fail, then they are throttled the same way', async () => {
    const staff: LoggedIn = await createStaff(app, [], admin);
    const attacker = newAddress();
    await failFive('user', staff.email, attacker);
    expectThrottled(await attempt('user', staff.email, staff.password, attacker));
    expectTokenPair(await attempt('user', staff.email, staff.password, newAddress()));
  });

  test('when one address fails across many accounts, then that address is throttled for every account and others are not', async () => {
    const stuffer = newAddress();
    const c = await createCustomer(app, admin);
    for (let i = 0; i < 30; i++) expectInvalid(await attempt('customer', unknownEmail(), 'password123456', stuffer));
    expectThrottled(await attempt('customer', unknownEmail(), 'password123456', stuffer));
    expectThrottled(await attempt('customer', c.email, c.password, stuffer));
    expectTokenPair(await attempt('customer', c.email, c.password, newAddress()));
  });

  test('when attempts come without X-Forwarded-For, then the throttle keys on the connecting address', async () => {
    const c = await createCustomer(app, admin);
    for (let i = 0; i < 5; i++) {
      const res = await app.request('POST', '/api/customer/login', { body: { email: c.email, password: `wrong-password-${i}` } });
      expectInvalid(res);
    }
    const res = await app.request('POST', '/api/customer/login', { body: { email: c.email, password: c.password } });
    expectThrottled(res);
    expectTokenPair(await attempt('customer', c.email, c.password, newAddress()));
  });
});
