import { decodeJwt } from 'jose';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp, type TestResponse } from '../../helpers/test-app';
import { claimsOf, expectTokenPair, expectUnauthenticated, login, probe, sidOf, sql } from './auth-kit';

let app: TestApp;
let admin: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'idrefresh', env: { ROLE: 'api' } });
  admin = await adminToken(app);
});
afterAll(() => app?.stop());

function refresh(token: string): Promise<TestResponse> {
  return app.request('POST', '/auth/refresh', { body: { refresh_token: token } });
}

async function freshCustomer(): Promise<LoggedIn> {
  return createCustomer(app, admin);
}

async function sessionCount(token: string): Promise<number> {
  const res = await app.request('GET', '/auth/sessions', { token });
  expect(res.status).toBe(200);
  return res.body.items.length;
}

/** Every refresh token handed out in this file, to look for in storage and logs. */
const handedOut: string[] = [];

test('when a refresh token is issued, then it is an opaque random string, not a JWT', async () => {
  const c = await freshCustomer();
  const again = (await login(app, 'customer', { email: c.email, password: c.password })).body.refresh_token as string;
  handedOut.push(c.refreshToken, again);
  for (const token of [c.refreshToken, again]) {
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect(token.split('.')).toHaveLength(1);
    expect(() => decodeJwt(token)).toThrow();
    expect(token).not.toContain(c.id);
  }
  expect(again).not.toBe(c.refreshToken);
});

test('when a refresh token is exchanged, then a new pair of the same session comes back and the old token is consumed', async () => {
  const c = await freshCustomer();
  const first = await refresh(c.refreshToken);
  expectTokenPair(first);
  handedOut.push(c.refreshToken, first.body.refresh_token);
  expect(first.body.refresh_token).not.toBe(c.refreshToken);
  expect(sidOf(first.body.access_token)).toBe(sidOf(c.token));
  expect(claimsOf(first.body.access_token).jti).not.toBe(claimsOf(c.token).jti);
  expect(claimsOf(first.body.access_token).sub).toBe(c.id);
  // A refresh is not a login: it makes no session.
  expect(await sessionCount(first.body.access_token)).toBe(1);
  expect((await app.request('GET', '/api/customer/me', { token: first.body.access_token })).status).toBe(200);

  const second = await refresh(first.body.refresh_token);
  expectTokenPair(second);
  handedOut.push(second.body.refresh_token);
  expect(sidOf(second.body.access_token)).toBe(sidOf(c.token));
});

test('when a refresh token is stored, then only a hash of it is kept', async () => {
  const c = await freshCustomer();
  const next = await refresh(c.refreshToken);
  handedOut.push(c.refreshToken, next.body.refresh_token);
  const rows = await sql(app, 'select * from refresh_tokens where session_id = ?', [sidOf(c.token)]);
  expect(rows).toHaveLength(2);
  const everything = JSON.stringify([
    await sql(app, 'select * from refresh_tokens'),
    await sql(app, 'select * from sessions'),
    await sql(app, 'select * from audit_entries'),
  ]);
  for (const token of handedOut) {
    expect(everything).not.toContain(token);
    expect(everything).not.toContain(token.slice(-20));
  }
});

test('when a used refresh token is presented again, then it is 401 and its whole session is revoked', async () => {
  const c = await freshCustomer();
  const other = await login(app, 'customer', { email: c.email, password: c.password });
  const next = await refresh(c.refreshToken);
  expectTokenPair(next);
  handedOut.push(c.refreshToken, next.body.refresh_token, other.body.refresh_token);

  const reuse = await refresh(c.refreshToken);
  expect(reuse.status).toBe(401);
  expect(reuse.body.code).toBe('UNAUTHENTICATED');
  expect(reuse.text).not.toMatch(/access_token|refresh_token/);

  // Every token of the session is dead: the newer refresh token and both access tokens.
  expectUnauthenticated(await app.request('GET', '/api/customer/me', { token: next.body.access_token }));
  expectUnauthenticated(await app.request('GET', '/api/customer/me', { token: c.token }));
  expect((await refresh(next.body.refresh_token)).status).toBe(401);
  // The customer's other session is not touched.
  expect((await app.request('GET', '/api/customer/me', { token: other.body.access_token })).status).toBe(200);
  expectTokenPair(await refresh(other.body.refresh_token));
});

test('when a refresh token two generations old is presented, then the session holding the latest pair is revoked too', async () => {
  const staff = await createStaff(app, ['view_customers'], admin);
  const gen1 = await refresh(staff.refreshToken);
  const gen2 = await refresh(gen1.body.refresh_token);
  expectTokenPair(gen2);
  handedOut.push(staff.refreshToken, gen1.body.refresh_token, gen2.body.refresh_token);
  expect((await app.request('GET', '/api/crm/customers', { token: gen2.body.access_token })).status).toBe(200);

  expect((await refresh(staff.refreshToken)).status).toBe(401);
  expectUnauthenticated(await app.request('GET', '/api/crm/customers', { token: gen2.body.access_token }));
  expect((await refresh(gen2.body.refresh_token)).status).toBe(401);
});

test('when fifty exchanges of one refresh token race, then exactly one succeeds', async () => {
  const c = await freshCustomer();
  handedOut.push(c.refreshToken);
  const answers = await Promise.all(Array.from({ length: 50 }, () => refresh(c.refreshToken)));
  const statuses = answers.map((a) => a.status);
  expect(statuses.filter((s) => s === 200)).toHaveLength(1);
  expect(statuses.filter((s) => s === 401)).toHaveLength(49);
  for (const a of answers.filter((x) => x.status === 401)) expect(a.body.code).toBe('UNAUTHENTICATED');
  const winner = answers.find((a) => a.status === 200)!;
  expectTokenPair(winner);
  handedOut.push(winner.body.refresh_token);
  // Storage agrees: the presented token is used once, and exactly one successor was made.
  const rows = await sql<{ used_at: Date | null }>(app, 'select used_at from refresh_tokens where session_id = ?', [
    sidOf(c.token),
  ]);
  expect(rows).toHaveLength(2);
  // The 49 late presentations were of a token already used: reuse detection revoked the session.
  expect((await refresh(winner.body.refresh_token)).status).toBe(401);
  expect(await probe(app, winner.body.access_token)).toBe(401);
});

test('when fifty exchanges race on each of several sessions, then each session gets exactly one success', async () => {
  const c = await freshCustomer();
  const pairs = [c.refreshToken];
  for (let i = 0; i < 3; i++)
    pairs.push((await login(app, 'customer', { email: c.email, password: c.password })).body.refresh_token);
  handedOut.push(...pairs);
  const answers = await Promise.all(
    pairs.flatMap((token) => Array.from({ length: 50 }, () => refresh(token).then((r) => [token, r] as const))),
  );
  for (const token of pairs) {
    const mine = answers.filter(([t]) => t === token).map(([, r]) => r.status);
    expect(mine.filter((s) => s === 200)).toHaveLength(1);
    expect(mine.filter((s) => s !== 401 && s !== 200)).toEqual([]);
  }
});

test('when the refresh token is unknown, malformed or an access token, then it is 401 and no session is touched', async () => {
  const c = await freshCustomer();
  handedOut.push(c.refreshToken);
  for (const token of ['rt_unknown', 'x'.repeat(512), c.token.slice(0, 512), c.refreshToken.slice(0, -1), `${c.refreshToken}x`]) {
    const res = await refresh(token);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHENTICATED');
  }
  expect(await probe(app, c.token)).toBe(200);
  expectTokenPair(await refresh(c.refreshToken));
});

test('when the refresh body is missing or empty, then it is 422', async () => {
  expect((await app.request('POST', '/auth/refresh', { body: {} })).status).toBe(422);
  expect((await app.request('POST', '/auth/refresh', { body: { refresh_token: '' } })).status).toBe(422);
  expect((await app.request('POST', '/auth/refresh', { body: { refresh_token: 42 } })).status).toBe(422);
});

test('when a refresh token has expired, then it is 401 but, not being a reuse, its session lives on', async () => {
  const c = await freshCustomer();
  const next = await refresh(c.refreshToken);
  expectTokenPair(next);
  handedOut.push(c.refreshToken, next.body.refresh_token);
  await sql(app, "update refresh_tokens set expires_at = now() - interval '1 second' where session_id = ? and used_at is null", [
    sidOf(c.token),
  ]);
  expect((await refresh(next.body.refresh_token)).status).toBe(401);
  expect((await app.request('GET', '/api/customer/me', { token: next.body.access_token })).status).toBe(200);
});

test('when the session was revoked, then its refresh token no longer works', async () => {
  const c = await freshCustomer();
  handedOut.push(c.refreshToken);
  expect((await app.request('DELETE', `/auth/sessions/${sidOf(c.token)}`, { token: c.token })).status).toBe(204);
  const res = await refresh(c.refreshToken);
  expect(res.status).toBe(401);
  expect(res.text).not.toMatch(/access_token/);
});

test('when refresh tokens were handed out, then none of them is in the logs', () => {
  expect(handedOut.length).toBeGreaterThan(10);
  const logs = JSON.stringify(app.logs);
  for (const token of handedOut) expect(logs).not.toContain(token);
});
