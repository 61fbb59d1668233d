import { createSecretKey, randomBytes, randomUUID } from 'node:crypto';
import { SignJWT, UnsecuredJWT, type JWTPayload } from 'jose';
import { PERMISSIONS } from '../../../src/domain/identity/permissions';
import { ADMIN, adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { claimsOf, expectTokenPair, expectUnauthenticated, headerOf, login, probe, sql } from './auth-kit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let app: TestApp;
let admin: string;
let customer: LoggedIn;
beforeAll(async () => {
  app = await startTestApp({ label: 'idlogin', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  customer = await createCustomer(app, admin);
});
afterAll(() => app?.stop());

async function adminUserId(): Promise<string> {
  const res = await app.request('GET', '/api/admin/users', { token: admin });
  const user = res.body.items.find((u: { email: string }) => u.email === ADMIN.email);
  return user.id;
}

async function setTtl(seconds: number): Promise<void> {
  const res = await app.request('PATCH', '/api/admin/settings', { token: admin, body: { access_token_ttl_seconds: seconds } });
  expect(res.status).toBe(200);
  expect(res.body.access_token_ttl_seconds).toBe(seconds);
}

describe('login answers', () => {
  test('when staff log in, then the answer is exactly a bearer token pair that lasts 900 s', async () => {
    const res = await login(app, 'user', ADMIN);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expectTokenPair(res, 900);
    expect(claimsOf(res.body.access_token).type).toBe('user');
  });

  test('when a customer logs in, then the answer has the same shape with a customer token', async () => {
    const res = await login(app, 'customer', { email: customer.email, password: customer.password });
    expectTokenPair(res, 900);
    expect(claimsOf(res.body.access_token).type).toBe('customer');
    expect(claimsOf(res.body.access_token).sub).toBe(customer.id);
  });

  test('when the email differs only in case and spacing, then the login still succeeds', async () => {
    expectTokenPair(await login(app, 'user', { email: `  ${ADMIN.email.toUpperCase()} `, password: ADMIN.password }));
    expectTokenPair(await login(app, 'customer', { email: customer.email.toUpperCase(), password: customer.password }));
  });

  test('when a staff login is sent to the customer endpoint or the other way round, then it is refused', async () => {
    const staffAtCustomer = await login(app, 'customer', ADMIN);
    expect(staffAtCustomer.status).toBe(401);
    expect(staffAtCustomer.text).not.toMatch(/access_token|refresh_token/);
    const customerAtStaff = await login(app, 'user', { email: customer.email, password: customer.password });
    expect(customerAtStaff.status).toBe(401);
    expect(customerAtStaff.text).not.toMatch(/access_token|refresh_token/);
  });

  test('when the login body is incomplete, then it is 422 with the validation body', async () => {
    const res = await app.request('POST', '/api/admin/users/login', { body: { email: ADMIN.email } });
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'password'], type: 'missing' })]);
  });
});

describe('access token lifetime from broker settings', () => {
  afterEach(() => setTtl(900));

  test('when nothing was changed, then the settings show the default of 900 s', async () => {
    const res = await app.request('GET', '/api/admin/settings', { token: admin });
    expect(res.status).toBe(200);
    expect(res.body.access_token_ttl_seconds).toBe(900);
  });

  test('when the lifetime is changed, then the next staff and customer logins and refreshes carry it', async () => {
    const before = await login(app, 'user', ADMIN);
    expectTokenPair(before, 900);
    await setTtl(1234);
    expect((await app.request('GET', '/api/admin/settings', { token: admin })).body.access_token_ttl_seconds).toBe(1234);
    expectTokenPair(await login(app, 'user', ADMIN), 1234);
    expectTokenPair(await login(app, 'customer', { email: customer.email, password: customer.password }), 1234);
    // A pair issued before the change is exchanged at the new lifetime too.
    expectTokenPair(await app.request('POST', '/auth/refresh', { body: { refresh_token: before.body.refresh_token } }), 1234);
    // A token already issued keeps the lifetime it was issued with.
    const old = claimsOf(before.body.access_token);
    expect(old.exp! - old.iat!).toBe(900);
    await setTtl(60);
    expectTokenPair(await login(app, 'user', ADMIN), 60);
  });

  test('when the lifetime is out of bounds, then it is 422 and nothing changes', async () => {
    for (const bad of [59, 86_401, 0, -1, 900.5, '900']) {
      const res = await app.request('PATCH', '/api/admin/settings', { token: admin, body: { access_token_ttl_seconds: bad } });
      expect(res.status).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'access_token_ttl_seconds']);
    }
    expectTokenPair(await login(app, 'user', ADMIN), 900);
  });

  test('when someone without manage_settings changes the settings, then it is 403 and nothing changes', async () => {
    const staff = await createStaff(app, ['view_customers'], admin);
    for (const token of [staff.token, customer.token]) {
      const res = await app.request('PATCH', '/api/admin/settings', { token, body: { access_token_ttl_seconds: 120 } });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('FORBIDDEN');
      expect((await app.request('GET', '/api/admin/settings', { token })).status).toBe(403);
    }
    expectTokenPair(await login(app, 'user', ADMIN), 900);
  });

  test('when ACCESS_TOKEN_TTL_SECONDS is set for a new deployment, then it is the default lifetime', async () => {
    const other = await startTestApp({ label: 'idlogin-ttl', env: { ROLE: 'api', ACCESS_TOKEN_TTL_SECONDS: '600' } });
    try {
      expectTokenPair(await login(other, 'user', ADMIN), 600);
      const token = (await login(other, 'user', ADMIN)).body.access_token;
      expect((await other.request('GET', '/api/admin/settings', { token })).body.access_token_ttl_seconds).toBe(600);
    } finally {
      await other.stop();
    }
  });
});

describe('bootstrap admin', () => {
  test('when the service starts on an empty database, then the admin exists with the admin role holding every permission', async () => {
    const roles = await app.request('GET', '/api/admin/roles', { token: admin });
    const role = roles.body.items.find((r: { name: string }) => r.name === 'admin');
    expect(role).toBeDefined();
    expect(role.built_in).toBe(true);
    expect(role.permissions).toEqual([...PERMISSIONS].sort());
    const users = await app.request('GET', '/api/admin/users', { token: admin });
    const bootstrap = users.body.items.find((u: { email: string }) => u.email === ADMIN.email);
    expect(bootstrap).toMatchObject({ is_active: true, totp_enabled: false, role_ids: [role.id] });
  });

  test('when another instance starts on the same database, then no second admin is made and the admin role is made whole again', async () => {
    await sql(app, `update roles set permissions = '{view_groups}' where name = 'admin'`);
    const second = await startTestApp({
      shareWith: app,
      env: { ROLE: 'api', BOOTSTRAP_ADMIN_EMAIL: 'other-admin@broker.test', BOOTSTRAP_ADMIN_PASSWORD: 'second-desk-key-2291' },
    });
    try {
      expect((await login(second, 'user', { email: 'other-admin@broker.test', password: 'other-admin-password-1' })).status).toBe(
        401,
      );
      const rows = await sql<{ permissions: string[] }>(app, `select permissions from roles where name = 'admin'`);
      expect([...rows[0]!.permissions].sort()).toEqual([...PERMISSIONS].sort());
      expect(await sql(app, 'select id from staff_users where email = ?', ['other-admin@broker.test'])).toHaveLength(0);
    } finally {
      await second.stop();
    }
  });
});

describe('access token claims', () => {
  test('when a staff token is decoded, then it is HS256 with sub, type, sid, iat, exp, jti, iss and aud', async () => {
    const started = Math.floor(Date.now() / 1000);
    const res = await login(app, 'user', ADMIN);
    const token = res.body.access_token as string;
    expect(headerOf(token)).toMatchObject({ alg: 'HS256' });
    const claims = claimsOf(token);
    expect(claims.sub).toBe(await adminUserId());
    expect(claims.type).toBe('user');
    expect(claims.sid).toMatch(UUID);
    expect(claims.jti).toMatch(UUID);
    expect(claims.iss).toBe(app.config.jwt.issuer);
    expect([claims.aud].flat()).toEqual([app.config.jwt.audience]);
    expect(claims.iat).toBeGreaterThanOrEqual(started - 2);
    expect(claims.iat).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 2);
    expect(claims.exp! - claims.iat!).toBe(900);
    // sid names the session the token belongs to: the one the session list marks current.
    const sessions = await app.request('GET', '/auth/sessions', { token });
    expect(sessions.body.items.find((s: { current: boolean }) => s.current)?.id).toBe(claims.sid);
  });

  test('when the same principal logs in twice, then each token has its own jti and its own session', async () => {
    const a = claimsOf((await login(app, 'customer', { email: customer.email, password: customer.password })).body.access_token);
    const b = claimsOf((await login(app, 'customer', { email: customer.email, password: customer.password })).body.access_token);
    expect(a.type).toBe('customer');
    expect(a.sub).toBe(customer.id);
    expect(a.jti).not.toBe(b.jti);
    expect(a.sid).not.toBe(b.sid);
  });
});

describe('forged and malformed tokens', () => {
  let base: Required<Pick<JWTPayload, 'sub' | 'iss' | 'aud'>> & { sid: string; type: string };
  let customerBase: typeof base;

  /** A token signed like the service signs: HS256, the service key, pinned iss/aud; `changes` break one thing. */
  function forge(
    changes: { claims?: Record<string, unknown>; drop?: string[]; alg?: string; key?: string; iat?: number; exp?: number } = {},
    from = base,
  ): Promise<string> {
    const payload: Record<string, unknown> = { ...from, jti: randomUUID(), ...changes.claims };
    for (const claim of changes.drop ?? []) delete payload[claim];
    const now = Math.floor(Date.now() / 1000);
    const jwt = new SignJWT(payload).setProtectedHeader({ alg: changes.alg ?? 'HS256', typ: 'JWT' });
    if (!changes.drop?.includes('iat')) jwt.setIssuedAt(changes.iat ?? now);
    if (!changes.drop?.includes('exp')) jwt.setExpirationTime(changes.exp ?? now + 600);
    return jwt.sign(createSecretKey(Buffer.from(changes.key ?? app.config.jwt.secret, 'utf8')));
  }

  beforeAll(async () => {
    const staffToken = (await login(app, 'user', ADMIN)).body.access_token;
    const c = claimsOf(staffToken);
    base = { sub: c.sub!, sid: c.sid!, type: 'user', iss: c.iss!, aud: c.aud! };
    const customerToken = (await login(app, 'customer', { email: customer.email, password: customer.password })).body
      .access_token;
    const cc = claimsOf(customerToken);
    customerBase = { sub: cc.sub!, sid: cc.sid!, type: 'customer', iss: cc.iss!, aud: cc.aud! };
  });

  test('when a token is forged exactly as the service signs, then it is accepted (the forging recipe is right)', async () => {
    expect(await probe(app, await forge())).toBe(200);
    expect((await app.request('GET', '/api/admin/settings', { token: await forge() })).status).toBe(200);
    expect((await app.request('GET', '/api/customer/me', { token: await forge({}, customerBase) })).status).toBe(200);
  });

  const forgeries: Array<[string, () => Promise<string>]> = [
    [
      'unsigned (alg none)',
      async () => new UnsecuredJWT({ ...base, jti: randomUUID() }).setIssuedAt().setExpirationTime('10m').encode(),
    ],
    ['signed with a wrong key', () => forge({ key: randomBytes(32).toString('base64url') })],
    ['HS512 with the right key', () => forge({ alg: 'HS512' })],
    ['HS384 with the right key', () => forge({ alg: 'HS384' })],
    ['of a wrong issuer', () => forge({ claims: { iss: 'someone-else' } })],
    ['of a wrong audience', () => forge({ claims: { aud: 'another-service' } })],
    ['without an issuer', () => forge({ drop: ['iss'] })],
    ['without an audience', () => forge({ drop: ['aud'] })],
    ['expired', () => forge({ iat: Math.floor(Date.now() / 1000) - 1000, exp: Math.floor(Date.now() / 1000) - 10 })],
    ['without exp', () => forge({ drop: ['exp'] })],
    ['without sid', () => forge({ drop: ['sid'] })],
    ['with a sid that is no session', () => forge({ claims: { sid: randomUUID() } })],
    ['without sub', () => forge({ drop: ['sub'] })],
    ['of another principal on a real session', () => forge({ claims: { sub: customerBase.sub } })],
    ['of type admin', () => forge({ claims: { type: 'admin' } })],
    ['without a type', () => forge({ drop: ['type'] })],
    ['of type customer on a staff session', () => forge({ claims: { type: 'customer' } })],
    ['of type user on a customer session', () => forge({}, { ...customerBase, type: 'user' })],
    [
      'with its payload altered after signing',
      async () => {
        const [h, , s] = (await forge()).split('.');
        const payload = Buffer.from(JSON.stringify({ ...base, sub: customerBase.sub, exp: 9_999_999_999 })).toString('base64url');
        return `${h}.${payload}.${s}`;
      },
    ],
    ['with its signature stripped', async () => `${(await forge()).split('.').slice(0, 2).join('.')}.`],
    ['a refresh token', async () => (await login(app, 'user', ADMIN)).body.refresh_token],
    ['garbage', async () => 'garbage'],
    ['three garbage parts', async () => 'aaa.bbb.ccc'],
    ['only dots', async () => '...'],
    ['shaped like an API token', async () => `tia_${randomBytes(32).toString('base64url')}`],
    ['very long', async () => 'x'.repeat(5000)],
  ];

  test.each(forgeries)(
    'when the bearer token is %s, then it is 401 UNAUTHENTICATED with WWW-Authenticate',
    async (_name, make) => {
      const token = await make();
      for (const path of ['/auth/sessions', '/api/admin/settings', '/api/customer/me']) {
        expectUnauthenticated(await app.request('GET', path, { token }));
      }
    },
  );

  const headers: Array<[string, string]> = [
    ['"Bearer" alone', 'Bearer'],
    ['"Bearer" and spaces', 'Bearer    '],
    ['Basic credentials', 'Basic xyz'],
    ['Basic with real credentials', `Basic ${Buffer.from(`${ADMIN.email}:${ADMIN.password}`).toString('base64')}`],
    ['two tokens', 'Bearer a.b.c d.e.f'],
    ['a token without a scheme', 'eyJhbGciOiJIUzI1NiJ9.e30.x'],
    ['garbage', '!!!'],
  ];

  test.each(headers)(
    'when the Authorization header is %s, then it is 401 UNAUTHENTICATED with WWW-Authenticate',
    async (_n, value) => {
      expectUnauthenticated(await app.request('GET', '/auth/sessions', { headers: { authorization: value } }));
      expectUnauthenticated(await app.request('GET', '/api/admin/settings', { headers: { authorization: value } }));
    },
  );

  test('when the scheme is written in lower case, then a real token is still accepted', async () => {
    const token = (await login(app, 'user', ADMIN)).body.access_token;
    expect((await app.request('GET', '/auth/sessions', { headers: { authorization: `bearer ${token}` } })).status).toBe(200);
  });

  test('when no Authorization header is sent, then it is 401 UNAUTHENTICATED with WWW-Authenticate', async () => {
    expectUnauthenticated(await app.request('GET', '/auth/sessions'));
    expectUnauthenticated(await app.request('GET', '/api/admin/settings'));
  });

  test('when a real token is used in the wrong family, then it is 403 not 401', async () => {
    const token = (await login(app, 'customer', { email: customer.email, password: customer.password })).body.access_token;
    const res = await app.request('GET', '/api/admin/settings', { token });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });
});

test('when all of the above has run, then no password, access token or refresh token is in the logs', async () => {
  const pairs = [
    await login(app, 'user', ADMIN),
    await login(app, 'customer', { email: customer.email, password: customer.password }),
  ];
  await app.request('GET', '/auth/sessions', { token: pairs[0]!.body.access_token });
  await app.request('GET', '/api/customer/me', { token: pairs[1]!.body.access_token });
  await app.request('POST', '/auth/refresh', { body: { refresh_token: pairs[1]!.body.refresh_token } });
  const logs = JSON.stringify(app.logs);
  expect(app.logs.length).toBeGreaterThan(20);
  for (const secret of [ADMIN.password, customer.password, admin, customer.token, customer.refreshToken]) {
    expect(logs).not.toContain(secret);
  }
  for (const p of pairs) {
    expect(logs).not.toContain(p.body.access_token);
    expect(logs).not.toContain(p.body.refresh_token);
    expect(logs).not.toContain(p.body.access_token.split('.')[2]);
  }
});
