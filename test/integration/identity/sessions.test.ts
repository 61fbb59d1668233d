import { randomUUID } from 'node:crypto';
import { ADMIN, adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectTokenPair, expectUnauthenticated, login, newAddress, probe, sidOf } from './auth-kit';

const SESSION_KEYS = ['created_at', 'current', 'id', 'ip', 'last_used_at', 'user_agent'];

let app: TestApp;
let admin: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'idsessions', env: { ROLE: 'api' } });
  admin = await adminToken(app);
});
afterAll(() => app?.stop());

async function sessionsOf(token: string): Promise<Array<Record<string, any>>> {
  const res = await app.request('GET', '/auth/sessions', { token });
  expect(res.status).toBe(200);
  expect(Object.keys(res.body)).toEqual(['items']);
  return res.body.items;
}

function revoke(token: string, sessionId: string) {
  return app.request('DELETE', `/auth/sessions/${sessionId}`, { token });
}

async function customerLogin(c: LoggedIn, options: { address?: string; userAgent?: string } = {}) {
  const res = await login(app, 'customer', { email: c.email, password: c.password }, options);
  expectTokenPair(res);
  return { token: res.body.access_token as string, refreshToken: res.body.refresh_token as string };
}

/** Deletes every cached session entry of this app, as an eviction or a Redis restart would. */
async function dropSessionCache(): Promise<number> {
  const { redis } = app.runtime.services;
  const keys = await redis.keys(`${app.config.queuePrefix}:auth:session:*`);
  if (keys.length) await redis.del(...keys);
  return keys.length;
}

test('when a principal logs in several times, then each login is a session listed with its client and the current one marked', async () => {
  const started = Date.now();
  const c = await createCustomer(app, admin);
  const phone = { address: newAddress(), userAgent: 'Phone/1.0' };
  const laptop = { address: newAddress(), userAgent: 'Laptop/2.0 (test)' };
  const a = await customerLogin(c, phone);
  const b = await customerLogin(c, laptop);

  const items = await sessionsOf(b.token);
  expect(items).toHaveLength(3);
  for (const item of items) {
    expect(Object.keys(item).sort()).toEqual(SESSION_KEYS);
    expect(new Date(item.created_at).getTime()).toBeGreaterThanOrEqual(started - 1000);
    expect(new Date(item.last_used_at).toISOString()).toBe(item.last_used_at);
  }
  expect(items.map((i) => i.id).sort()).toEqual([sidOf(c.token), sidOf(a.token), sidOf(b.token)].sort());
  expect(items.filter((i) => i.current).map((i) => i.id)).toEqual([sidOf(b.token)]);
  expect(items.find((i) => i.id === sidOf(a.token))).toMatchObject({ ip: phone.address, user_agent: phone.userAgent });
  expect(items.find((i) => i.id === sidOf(b.token))).toMatchObject({ ip: laptop.address, user_agent: laptop.userAgent });

  // From another session of the same customer, that one is the current.
  const fromA = await sessionsOf(a.token);
  expect(fromA.filter((i) => i.current).map((i) => i.id)).toEqual([sidOf(a.token)]);
});

test('when a refreshed token lists sessions, then its session is still the one marked current and no session was added', async () => {
  const c = await createCustomer(app, admin);
  const next = await app.request('POST', '/auth/refresh', { body: { refresh_token: c.refreshToken } });
  expectTokenPair(next);
  const items = await sessionsOf(next.body.access_token);
  expect(items).toHaveLength(1);
  expect(items[0]).toMatchObject({ id: sidOf(c.token), current: true });
});

test("when sessions are listed, then other principals' sessions are never among them", async () => {
  const c1 = await createCustomer(app, admin);
  const c2 = await createCustomer(app, admin);
  const staff = await createStaff(app, ['view_customers'], admin);
  const adminSid = sidOf(admin);

  const ids1 = (await sessionsOf(c1.token)).map((i) => i.id);
  expect(ids1).toEqual([sidOf(c1.token)]);
  const ids2 = (await sessionsOf(c2.token)).map((i) => i.id);
  expect(ids2).toEqual([sidOf(c2.token)]);
  const staffIds = (await sessionsOf(staff.token)).map((i) => i.id);
  expect(staffIds).toEqual([sidOf(staff.token)]);
  const adminIds = (await sessionsOf(admin)).map((i) => i.id);
  expect(adminIds).toContain(adminSid);
  for (const foreign of [sidOf(c1.token), sidOf(c2.token), sidOf(staff.token)]) expect(adminIds).not.toContain(foreign);
});

test('when a session is revoked, then the very next request with its token is 401 and the other sessions keep working', async () => {
  const c = await createCustomer(app, admin);
  const a = await customerLogin(c);
  const b = await customerLogin(c);
  // Warm the cache of the session to be revoked, so revocation must beat a cached "active".
  expect(await probe(app, a.token)).toBe(200);

  const res = await revoke(b.token, sidOf(a.token));
  expect(res.status).toBe(204);
  expect(res.text).toBe('');
  expectUnauthenticated(await app.request('GET', '/api/customer/me', { token: a.token }));
  expectUnauthenticated(await app.request('GET', '/auth/sessions', { token: a.token }));
  expect((await app.request('POST', '/auth/refresh', { body: { refresh_token: a.refreshToken } })).status).toBe(401);

  expect((await app.request('GET', '/api/customer/me', { token: b.token })).status).toBe(200);
  expect((await app.request('GET', '/api/customer/me', { token: c.token })).status).toBe(200);
  const ids = (await sessionsOf(b.token)).map((i) => i.id);
  expect(ids).not.toContain(sidOf(a.token));
  expect(ids.sort()).toEqual([sidOf(c.token), sidOf(b.token)].sort());
});

test('when sessions are revoked one after another, then each revoked token fails on the request right after, with no grace', async () => {
  const staff = await createStaff(app, ['view_customers'], admin);
  for (let i = 0; i < 5; i++) {
    const pair = await login(app, 'user', { email: staff.email, password: staff.password });
    const token = pair.body.access_token as string;
    expect((await app.request('GET', '/api/crm/customers', { token })).status).toBe(200);
    expect((await revoke(staff.token, sidOf(token))).status).toBe(204);
    expectUnauthenticated(await app.request('GET', '/api/crm/customers', { token }));
  }
  expect((await app.request('GET', '/api/crm/customers', { token: staff.token })).status).toBe(200);
});

test('when the caller revokes its own current session, then that token stops working at once', async () => {
  const c = await createCustomer(app, admin);
  expect((await revoke(c.token, sidOf(c.token))).status).toBe(204);
  expectUnauthenticated(await app.request('GET', '/auth/sessions', { token: c.token }));
});

test('when a session is revoked, then access tokens issued before and after a refresh both stop working', async () => {
  const c = await createCustomer(app, admin);
  const next = await app.request('POST', '/auth/refresh', { body: { refresh_token: c.refreshToken } });
  expectTokenPair(next);
  const other = await customerLogin(c);
  expect((await revoke(other.token, sidOf(c.token))).status).toBe(204);
  expectUnauthenticated(await app.request('GET', '/api/customer/me', { token: c.token }));
  expectUnauthenticated(await app.request('GET', '/api/customer/me', { token: next.body.access_token }));
  expect((await app.request('POST', '/auth/refresh', { body: { refresh_token: next.body.refresh_token } })).status).toBe(401);
});

test("when a principal tries to revoke another principal's session, then it is 404 and that session keeps working", async () => {
  const victim = await createCustomer(app, admin);
  const other = await createCustomer(app, admin);
  const staff = await createStaff(app, ['view_customers', 'manage_customers'], admin);
  for (const token of [other.token, staff.token, admin]) {
    const res = await revoke(token, sidOf(victim.token));
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
  }
  // And the other way round: a customer cannot revoke a staff session.
  expect((await revoke(victim.token, sidOf(staff.token))).status).toBe(404);
  expect((await revoke(victim.token, randomUUID())).status).toBe(404);
  expect((await app.request('GET', '/api/customer/me', { token: victim.token })).status).toBe(200);
  expect((await app.request('GET', '/api/crm/customers', { token: staff.token })).status).toBe(200);
});

test('when the session id is not a UUID, then it is 422 at the path', async () => {
  const c = await createCustomer(app, admin);
  const res = await revoke(c.token, 'not-a-uuid');
  expect(res.status).toBe(422);
  expect(res.body.detail[0].loc).toEqual(['path', 'session_id']);
});

test('when the session endpoints are called without a token or with an API token, then it is 401 or 403', async () => {
  expectUnauthenticated(await app.request('GET', '/auth/sessions'));
  expectUnauthenticated(await app.request('DELETE', `/auth/sessions/${randomUUID()}`));
  const issued = await app.request('POST', '/api/crm/settings/api-tokens', {
    token: admin,
    body: { name: 'sessions-test', scopes: ['view_customers'] },
  });
  expect(issued.status).toBe(201);
  expect((await app.request('GET', '/auth/sessions', { token: issued.body.token })).status).toBe(403);
  expect((await app.request('DELETE', `/auth/sessions/${sidOf(admin)}`, { token: issued.body.token })).status).toBe(403);
  expect(await probe(app, admin)).toBe(200);
});

test('when the session cache is lost, then Postgres still refuses revoked sessions and accepts live ones', async () => {
  const c = await createCustomer(app, admin);
  const revoked = await customerLogin(c);
  const live = await customerLogin(c);
  const staff = await createStaff(app, ['view_customers'], admin);
  const staffRevoked = await login(app, 'user', { email: staff.email, password: staff.password });
  for (const token of [revoked.token, live.token, staff.token, staffRevoked.body.access_token])
    expect(await probe(app, token)).toBe(200);
  expect((await revoke(live.token, sidOf(revoked.token))).status).toBe(204);
  expect((await revoke(staff.token, sidOf(staffRevoked.body.access_token))).status).toBe(204);

  expect(await dropSessionCache()).toBeGreaterThan(0);
  expectUnauthenticated(await app.request('GET', '/api/customer/me', { token: revoked.token }));
  expectUnauthenticated(await app.request('GET', '/api/crm/customers', { token: staffRevoked.body.access_token }));
  expect((await app.request('GET', '/api/customer/me', { token: live.token })).status).toBe(200);
  expect((await app.request('GET', '/api/crm/customers', { token: staff.token })).status).toBe(200);

  // Again with the cache refilled from Postgres, and then lost once more.
  expectUnauthenticated(await app.request('GET', '/api/customer/me', { token: revoked.token }));
  await dropSessionCache();
  expectUnauthenticated(await app.request('GET', '/api/customer/me', { token: revoked.token }));
  expect((await app.request('GET', '/api/customer/me', { token: live.token })).status).toBe(200);
});

test('when the cache is lost before a revocation, then the revocation still holds', async () => {
  const c = await createCustomer(app, admin);
  const victim = await customerLogin(c);
  await dropSessionCache();
  expect((await revoke(c.token, sidOf(victim.token))).status).toBe(204);
  expectUnauthenticated(await app.request('GET', '/api/customer/me', { token: victim.token }));
  await dropSessionCache();
  expectUnauthenticated(await app.request('GET', '/api/customer/me', { token: victim.token }));
  expect((await app.request('GET', '/api/customer/me', { token: c.token })).status).toBe(200);
});

test('when many requests of a session are in flight while it is revoked, then every request sent after the 204 is refused', async () => {
  const c = await createCustomer(app, admin);
  const victim = await customerLogin(c);
  const background = Array.from({ length: 20 }, () => app.request('GET', '/api/customer/me', { token: victim.token }));
  expect((await revoke(c.token, sidOf(victim.token))).status).toBe(204);
  const after = await Promise.all(
    Array.from({ length: 20 }, () => app.request('GET', '/api/customer/me', { token: victim.token })),
  );
  expect(after.map((r) => r.status)).toEqual(Array(20).fill(401));
  for (const r of await Promise.all(background)) expect([200, 401]).toContain(r.status);
});

test('when staff log in, then their sessions are listed the same way', async () => {
  const res = await login(app, 'user', ADMIN, { userAgent: 'AdminConsole/3' });
  const items = await sessionsOf(res.body.access_token);
  const current = items.find((i) => i.current);
  expect(current).toMatchObject({ id: sidOf(res.body.access_token), user_agent: 'AdminConsole/3', ip: expect.any(String) });
});
