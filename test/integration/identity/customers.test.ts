import { randomBytes, randomUUID } from 'node:crypto';
import { adminToken, loginCustomer } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';

let app: TestApp;
let admin: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'idcustomers', env: { ROLE: 'api' } });
  admin = await adminToken(app);
});
afterAll(() => app?.stop());

const PASSWORD = 'customer-secret-99';
const newEmail = (label = 'cust') => `${label}-${randomBytes(4).toString('hex')}@client.test`;

function create(body: Record<string, unknown>) {
  return app.request('POST', '/api/crm/customers', { token: admin, body });
}

test('when staff creates a customer, then 201 with its fields and defaults and never its password or hash', async () => {
  const email = newEmail();
  const before = Date.now();
  const res = await create({ email, password: PASSWORD, first_name: 'Ada', last_name: 'Lovelace' });
  expect(res.status).toBe(201);
  expect(res.body).toEqual({
    id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
    email,
    first_name: 'Ada',
    last_name: 'Lovelace',
    locale: 'en',
    country: null,
    affiliate_id: null,
    is_active: true,
    totp_enabled: false,
    verification_level: 0,
    access: 'full',
    lifecycle: 'registered',
    ftd_at: null,
    ftd_amount: null,
    sales_status: null,
    phone: null,
    lead_source: null,
    lead_campaign: null,
    partner_code: null,
    partner_id: null,
    promo_code: null,
    closed_at: null,
    account_manager_id: null,
    team_id: null,
    created_at: expect.any(String),
    updated_at: expect.any(String),
  });
  const created = Date.parse(res.body.created_at);
  expect(created).toBeGreaterThanOrEqual(before - 1000);
  expect(created).toBeLessThanOrEqual(Date.now() + 1000);
  expect(res.text).not.toContain(PASSWORD);
  expect(res.text).not.toMatch(/argon2|password/i);
});

test('when locale and country are given, then they are kept; when malformed, then 422 at those fields', async () => {
  const ok = await create({
    email: newEmail(),
    password: PASSWORD,
    first_name: 'Kurt',
    last_name: 'Gödel',
    locale: 'de-AT',
    country: 'AT',
  });
  expect(ok.status).toBe(201);
  expect(ok.body).toEqual(expect.objectContaining({ locale: 'de-AT', country: 'AT', last_name: 'Gödel' }));

  const bad = await create({
    email: newEmail(),
    password: PASSWORD,
    first_name: 'X',
    last_name: 'Y',
    locale: 'german',
    country: 'at',
  });
  expect(bad.status).toBe(422);
  expect(bad.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual(
    expect.arrayContaining([
      ['body', 'locale'],
      ['body', 'country'],
    ]),
  );
});

test('when required fields are missing or the email is not an email, then 422 names each field and nothing is created', async () => {
  const res = await create({ email: 'not-an-email', password: 'short' });
  expect(res.status).toBe(422);
  expect(res.body.detail.map((d: { loc: unknown[]; type: string }) => [d.loc, d.type])).toEqual(
    expect.arrayContaining([
      [['body', 'email'], 'value_error'],
      [['body', 'password'], 'string_too_short'],
      [['body', 'first_name'], 'missing'],
      [['body', 'last_name'], 'missing'],
    ]),
  );
  const list = await app.request('GET', '/api/crm/customers?email=not-an-email', { token: admin });
  expect(list.body.total).toBe(0);
});

test('when a name holds a line break or another control character, then 422 at that field and nothing is created', async () => {
  for (const [first_name, last_name] of [
    ['a\r\nBcc: x@evil.test', 'Ok'],
    ['Ok', 'tab\there'],
    ['nul\u0000', 'Ok'],
    ['Ok', 'line\u2028break'],
    ['right\u202Eleft', 'Ok'],
  ]) {
    const email = newEmail('ctl');
    const res = await create({ email, password: PASSWORD, first_name, last_name });
    expect(res.status).toBe(422);
    const field = first_name === 'Ok' ? 'last_name' : 'first_name';
    expect(res.body.detail).toEqual([
      // NUL is refused in every string of every body (string_unicode) before the name rule sees it.
      {
        loc: ['body', field],
        msg: expect.stringMatching(/control characters|NUL/),
        type: expect.stringMatching(/^(value_error|string_unicode)$/),
      },
    ]);
    expect((await app.request('GET', `/api/crm/customers?email=${email}`, { token: admin })).body.total).toBe(0);
  }
});

test('when a name holds markup, then it is stored as typed', async () => {
  const res = await create({
    email: newEmail('markup'),
    password: PASSWORD,
    first_name: '<b>x</b>',
    last_name: "O'Brien & Söhne",
  });
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({ first_name: '<b>x</b>', last_name: "O'Brien & Söhne" });
});

test('when one customer is fetched, then 200 with the same view; an unknown uuid is 404 and a non-uuid 422', async () => {
  const created = (await create({ email: newEmail(), password: PASSWORD, first_name: 'A', last_name: 'B' })).body;
  const one = await app.request('GET', `/api/crm/customers/${created.id}`, { token: admin });
  expect(one.status).toBe(200);
  expect(one.body).toEqual(created);

  const missing = await app.request('GET', `/api/crm/customers/${randomUUID()}`, { token: admin });
  expect(missing.status).toBe(404);
  expect(missing.body).toEqual({ detail: expect.any(String), code: 'NOT_FOUND' });

  const malformed = await app.request('GET', '/api/crm/customers/12345', { token: admin });
  expect(malformed.status).toBe(422);
  expect(malformed.body.detail).toEqual([expect.objectContaining({ loc: ['path', 'customer_id'], type: 'uuid_parsing' })]);
});

test('when customers are listed in pages, then pages are disjoint, newest first, and total counts them all', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await create({ email: newEmail('page'), password: PASSWORD, first_name: `P${i}`, last_name: 'Q' });
    expect(res.status).toBe(201);
    ids.push(res.body.id);
  }
  const all = await app.request('GET', '/api/crm/customers?page_size=100', { token: admin });
  expect(all.status).toBe(200);
  const total = all.body.total as number;
  expect(all.body.items).toHaveLength(total);
  expect(total).toBeGreaterThanOrEqual(5);
  // Newest first: the five just made lead, last made first.
  expect(all.body.items.slice(0, 5).map((c: { id: string }) => c.id)).toEqual([...ids].reverse());
  const times = all.body.items.map((c: { created_at: string }) => Date.parse(c.created_at));
  expect([...times].sort((a, b) => b - a)).toEqual(times);

  const pageSize = 2;
  const seen: string[] = [];
  for (let page = 1; page <= Math.ceil(total / pageSize); page++) {
    const res = await app.request('GET', `/api/crm/customers?page=${page}&page_size=${pageSize}`, { token: admin });
    expect(res.body).toEqual(expect.objectContaining({ page, page_size: pageSize, total }));
    seen.push(...res.body.items.map((c: { id: string }) => c.id));
  }
  expect(seen).toEqual(all.body.items.map((c: { id: string }) => c.id));

  const defaults = await app.request('GET', '/api/crm/customers', { token: admin });
  expect(defaults.body).toEqual(expect.objectContaining({ page: 1, page_size: 20, total }));

  const bad = await app.request('GET', '/api/crm/customers?page=abc&page_size=0', { token: admin });
  expect(bad.status).toBe(422);
  expect(bad.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual(
    expect.arrayContaining([
      ['query', 'page'],
      ['query', 'page_size'],
    ]),
  );
});

test('when a customer email differs from an existing one only in case, then 409 and there is still one customer', async () => {
  const email = newEmail('Dup');
  const first = await create({ email: email.toUpperCase(), password: PASSWORD, first_name: 'A', last_name: 'B' });
  expect(first.status).toBe(201);
  const again = await create({ email: email.toLowerCase(), password: 'another-password', first_name: 'C', last_name: 'D' });
  expect(again.status).toBe(409);
  expect(again.body).toEqual({ detail: expect.any(String), code: expect.stringMatching(/^[A-Z_]+$/) });
  const found = await app.request('GET', `/api/crm/customers?email=${encodeURIComponent(email.toUpperCase())}`, {
    token: admin,
  });
  expect(found.body.total).toBe(1);
  expect(found.body.items[0].id).toBe(first.body.id);
});

test('when a customer logs in at /api/customer/login (any email case), then it gets a token pair that reaches its own profile', async () => {
  const email = newEmail('login');
  const created = (await create({ email, password: PASSWORD, first_name: 'L', last_name: 'M' })).body;
  const pair = await loginCustomer(app, email.toUpperCase(), PASSWORD);
  expect(pair).toEqual(expect.objectContaining({ token_type: 'bearer', expires_in: 900 }));
  const me = await app.request('GET', '/api/customer/me', { token: pair.access_token });
  expect(me.status).toBe(200);
  expect(me.body).toEqual(created);

  // The wrong password and the staff login door both refuse it.
  expect((await app.request('POST', '/api/customer/login', { body: { email, password: 'wrong-password' } })).status).toBe(401);
  expect((await app.request('POST', '/api/admin/users/login', { body: { email, password: PASSWORD } })).status).toBe(401);
});
