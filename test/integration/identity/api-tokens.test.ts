import { createHash, randomUUID } from 'node:crypto';
import type { Permission } from '../../../src/domain/identity/permissions';
import { adminToken, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';

let app: TestApp;
let admin: string;
/** Holds manage_api_tokens and view_customers only: its tokens can have no more. */
let issuer: LoggedIn;
/** Every token text this file saw, to look for in the logs and the database at the end. */
const texts: string[] = [];

beforeAll(async () => {
  app = await startTestApp({ label: 'idapitokens', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  issuer = await createStaff(app, ['manage_api_tokens', 'view_customers'], admin);
});
afterAll(() => app?.stop());

async function issue(token: string, body: Record<string, unknown>) {
  const res = await app.request('POST', '/api/crm/settings/api-tokens', { token, body });
  if (res.status === 201) texts.push(res.body.token);
  return res;
}

async function sql<T = Record<string, unknown>>(query: string, params: unknown[] = []): Promise<T[]> {
  return app.runtime.services.orm.em.fork().getConnection().execute<T[]>(query, params);
}

async function forgetCachedApiTokens(): Promise<number> {
  const redis = app.runtime.services.redis;
  const keys = await redis.keys(`${app.config.queuePrefix}:auth:apitoken:*`);
  if (keys.length) await redis.del(...keys);
  return keys.length;
}

test('when staff issues an API token, then 201 with the token text once: tia_ and at least 128 random bits', async () => {
  const before = Date.now();
  const res = await issue(issuer.token, { name: 'ci', scopes: ['view_customers'], expires_in_days: 30 });
  expect(res.status).toBe(201);
  expect(res.body).toEqual({
    id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    name: 'ci',
    token: expect.stringMatching(/^tia_[A-Za-z0-9_-]+$/),
    token_prefix: expect.any(String),
    scopes: ['view_customers'],
    issued_by: issuer.id,
    created_at: expect.any(String),
    expires_at: expect.any(String),
    revoked_at: null,
    last_used_at: null,
  });
  const random = (res.body.token as string).slice('tia_'.length);
  // base64url: 6 bits a character.
  expect(random.length * 6).toBeGreaterThanOrEqual(128);
  expect((res.body.token as string).startsWith(res.body.token_prefix)).toBe(true);
  expect(res.body.token_prefix.length).toBeLessThan(res.body.token.length / 2);
  const expires = Date.parse(res.body.expires_at) - before;
  expect(expires).toBeGreaterThan(30 * 86_400_000 - 60_000);
  expect(expires).toBeLessThan(30 * 86_400_000 + 60_000);

  const other = await issue(issuer.token, { name: 'ci', scopes: ['view_customers'] });
  expect(other.body.token).not.toBe(res.body.token);
  expect(other.body.expires_at).toBeNull();
});

test('when tokens are listed, then each is there without its text', async () => {
  const res = await issue(issuer.token, { name: 'listed', scopes: ['view_customers'] });
  const list = await app.request('GET', '/api/crm/settings/api-tokens', { token: issuer.token });
  expect(list.status).toBe(200);
  const { token: text, ...view } = res.body;
  expect(list.body.items).toContainEqual(view);
  for (const item of list.body.items) expect(item).not.toHaveProperty('token');
  for (const t of texts) expect(list.text).not.toContain(t);
  expect(text).toEqual(expect.any(String));
});

test('when a token is stored, then the api_tokens table holds a hash of it and never its text', async () => {
  const res = await issue(issuer.token, { name: 'stored', scopes: ['view_customers'] });
  const rows = await sql<Record<string, unknown>>('select * from api_tokens where id = ?', [res.body.id]);
  expect(rows).toHaveLength(1);
  expect(rows[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/);
  expect(rows[0]!.token_hash).toBe(createHash('sha256').update(res.body.token).digest('hex'));
  const everything = JSON.stringify(await sql('select * from api_tokens'));
  for (const t of texts) expect(everything).not.toContain(t);
});

test('when the scopes go beyond what the issuer holds, then 422 at each such scope and no token is made', async () => {
  const count = (await sql<{ n: string }>('select count(*) as n from api_tokens'))[0]!.n;
  const res = await issue(issuer.token, {
    name: 'greedy',
    scopes: ['view_customers', 'manage_users', 'view_customers', 'view_audit'],
  });
  expect(res.status).toBe(422);
  expect(res.body.detail).toEqual([
    expect.objectContaining({ loc: ['body', 'scopes', 1] }),
    expect.objectContaining({ loc: ['body', 'scopes', 3] }),
  ]);
  const unknown = await issue(issuer.token, { name: 'typo', scopes: ['view_customer'] });
  expect(unknown.status).toBe(422);
  expect(unknown.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'scopes', 0], type: 'literal_error' })]);
  expect((await sql<{ n: string }>('select count(*) as n from api_tokens'))[0]!.n).toBe(count);
});

test('when an API token issues another, then the new scopes must fit within its own scopes, not the issuer’s', async () => {
  const parent = (await issue(admin, { name: 'parent', scopes: ['manage_api_tokens', 'view_customers'] })).body.token;
  const beyond = await issue(parent, { name: 'child', scopes: ['view_customers', 'view_audit'] });
  expect(beyond.status).toBe(422);
  expect(beyond.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'scopes', 1] })]);
  const within = await issue(parent, { name: 'child', scopes: ['view_customers'] });
  expect(within.status).toBe(201);
});

test('when a token is used as Bearer, then it works on staff routes within its scopes and gets 403 outside them', async () => {
  const text = (await issue(issuer.token, { name: 'reader', scopes: ['view_customers'] })).body.token;
  expect((await app.request('GET', '/api/crm/customers', { token: text })).status).toBe(200);
  const outside: Array<[string, string, Permission]> = [
    ['POST', '/api/crm/customers', 'manage_customers'],
    ['GET', '/api/crm/settings/api-tokens', 'manage_api_tokens'],
    ['GET', '/api/admin/settings', 'manage_settings'],
    ['GET', '/api/admin/audit', 'view_audit'],
  ];
  for (const [method, path] of outside) {
    const res = await app.request(method, path, { token: text, body: method === 'POST' ? {} : undefined });
    expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 403, code: 'FORBIDDEN' });
  }
  // The issuer's own session token can do what the API token lacks: the scope, not the issuer, decides.
  expect((await app.request('GET', '/api/crm/settings/api-tokens', { token: issuer.token })).status).toBe(200);
});

test('when a token is revoked, then 204 and the very next request with it is 401', async () => {
  const issued = (await issue(issuer.token, { name: 'revokable', scopes: ['view_customers'] })).body;
  // Used once first, so the revocation has a cached "active" entry to beat.
  expect((await app.request('GET', '/api/crm/customers', { token: issued.token })).status).toBe(200);
  const del = await app.request('DELETE', `/api/crm/settings/api-tokens/${issued.id}`, { token: issuer.token });
  expect(del.status).toBe(204);
  expect(del.text).toBe('');
  const after = await app.request('GET', '/api/crm/customers', { token: issued.token });
  expect(after.status).toBe(401);
  expect(after.body.code).toBe('UNAUTHENTICATED');
  expect(after.headers.get('www-authenticate')).toBe('Bearer');
  // Still refused once the cache is gone: Postgres holds the revocation too.
  await forgetCachedApiTokens();
  expect((await app.request('GET', '/api/crm/customers', { token: issued.token })).status).toBe(401);
  const list = await app.request('GET', '/api/crm/settings/api-tokens', { token: issuer.token });
  const listed = list.body.items.find((t: { id: string }) => t.id === issued.id);
  expect(listed.revoked_at).toEqual(expect.any(String));

  expect((await app.request('DELETE', `/api/crm/settings/api-tokens/${randomUUID()}`, { token: issuer.token })).status).toBe(404);
});

test('when a token has expired, then it gets 401', async () => {
  const issued = (await issue(issuer.token, { name: 'short-lived', scopes: ['view_customers'], expires_in_days: 1 })).body;
  expect((await app.request('GET', '/api/crm/customers', { token: issued.token })).status).toBe(200);
  await sql(`update api_tokens set expires_at = now() - interval '1 minute' where id = ?`, [issued.id]);
  expect(await forgetCachedApiTokens()).toBeGreaterThan(0);
  const res = await app.request('GET', '/api/crm/customers', { token: issued.token });
  expect(res.status).toBe(401);
  expect(res.body.code).toBe('UNAUTHENTICATED');
});

test('when tokens have been issued, used, refused and revoked, then no token text appears in the logs or the audit trail', async () => {
  // Includes a request that failed with a token, and ones sent with odd headers.
  const text = (await issue(issuer.token, { name: 'quiet', scopes: ['view_customers'] })).body.token;
  await app.request('GET', '/api/admin/audit', { token: text });
  await app.request('GET', '/api/crm/customers', { headers: { authorization: `bearer  ${text} x` } });
  expect(texts.length).toBeGreaterThan(5);
  const logs = JSON.stringify(app.logs);
  expect(app.logs.length).toBeGreaterThan(10);
  const audit = JSON.stringify(await sql('select * from audit_entries'));
  for (const t of texts) {
    expect(logs).not.toContain(t);
    expect(logs).not.toContain(t.slice('tia_'.length));
    expect(audit).not.toContain(t);
  }
});
