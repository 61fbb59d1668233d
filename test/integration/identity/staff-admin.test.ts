import { randomBytes, randomUUID } from 'node:crypto';
import { ADMIN, adminToken, createStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';

/**
 * Staff administration: GET/PATCH users and roles, DELETE roles. A
 * change applies to the affected people's very next request, API tokens included.
 */
let app: TestApp;
let admin: string;
let adminRoleId: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'staffadmin', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  const roles = await app.request('GET', '/api/admin/roles?page_size=100', { token: admin });
  adminRoleId = roles.body.items.find((r: { built_in: boolean }) => r.built_in).id;
});
afterAll(() => app?.stop());

const suffix = () => randomBytes(4).toString('hex');
const patchRole = (id: string, body: unknown, token = admin) => app.request('PATCH', `/api/admin/roles/${id}`, { token, body });
const patchUser = (id: string, body: unknown, token = admin) => app.request('PATCH', `/api/admin/users/${id}`, { token, body });
const settings = (token: string) => app.request('GET', '/api/admin/settings', { token });

async function roleOf(user: LoggedIn): Promise<string> {
  const res = await app.request('GET', `/api/admin/users/${user.id}`, { token: admin });
  return res.body.role_ids[0];
}

async function apiTokenOf(user: LoggedIn, scopes: string[]): Promise<{ id: string; token: string }> {
  const res = await app.request('POST', '/api/crm/settings/api-tokens', {
    token: user.token,
    body: { name: `t-${suffix()}`, scopes },
  });
  expect(res.status).toBe(201);
  return { id: res.body.id, token: res.body.token };
}

describe('reading', () => {
  test('when a user and a role are asked for by id, then they are shown; an unknown id is 404', async () => {
    const user = await createStaff(app, ['view_audit'], admin);
    const got = await app.request('GET', `/api/admin/users/${user.id}`, { token: admin });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: user.id, email: user.email, is_active: true, role_ids: [expect.any(String)] });
    const role = await app.request('GET', `/api/admin/roles/${got.body.role_ids[0]}`, { token: admin });
    expect(role.body.permissions).toEqual(['view_audit']);
    expect((await app.request('GET', `/api/admin/users/${randomUUID()}`, { token: admin })).status).toBe(404);
    expect((await app.request('GET', `/api/admin/roles/${randomUUID()}`, { token: admin })).status).toBe(404);
  });

  test('when roles are listed with page_size 1, then pages are disjoint and total counts them all', async () => {
    const first = await app.request('GET', '/api/admin/roles?page_size=1&page=1', { token: admin });
    const second = await app.request('GET', '/api/admin/roles?page_size=1&page=2', { token: admin });
    expect(first.body).toMatchObject({ page: 1, page_size: 1, total: expect.any(Number) });
    expect(first.body.total).toBeGreaterThanOrEqual(2);
    expect(first.body.items[0].id).not.toBe(second.body.items[0].id);
  });
});

describe('a change takes effect on the very next request', () => {
  test("when a permission is taken from a role, then its holders' next request with a session or an API token is refused", async () => {
    const user = await createStaff(app, ['manage_settings', 'manage_api_tokens'], admin);
    const token = await apiTokenOf(user, ['manage_settings']);
    expect((await settings(user.token)).status).toBe(200);
    expect((await settings(token.token)).status).toBe(200);

    expect((await patchRole(await roleOf(user), { permissions: ['manage_api_tokens'] })).status).toBe(200);
    expect((await settings(user.token)).status).toBe(403);
    expect((await settings(token.token)).status).toBe(403);

    // Given back, it works again at once.
    expect((await patchRole(await roleOf(user), { permissions: ['manage_api_tokens', 'manage_settings'] })).status).toBe(200);
    expect((await settings(user.token)).status).toBe(200);
    expect((await settings(token.token)).status).toBe(200);
  });

  test("when a user's roles change, then its next request carries the new permissions", async () => {
    const user = await createStaff(app, ['view_audit'], admin);
    const other = await app.request('POST', '/api/admin/roles', {
      token: admin,
      body: { name: `s-${suffix()}`, permissions: ['manage_settings'] },
    });
    expect((await settings(user.token)).status).toBe(403);
    expect((await patchUser(user.id, { role_ids: [other.body.id] })).status).toBe(200);
    expect((await settings(user.token)).status).toBe(200);
    expect((await app.request('GET', '/api/admin/audit', { token: user.token })).status).toBe(403);
  });

  test('when a user is deactivated, then its sessions, refresh tokens and API tokens stop at once', async () => {
    const user = await createStaff(app, ['manage_settings', 'manage_api_tokens'], admin);
    const token = await apiTokenOf(user, ['manage_settings']);
    const res = await patchUser(user.id, { is_active: false });
    expect(res.status).toBe(200);
    expect(res.body.is_active).toBe(false);
    expect((await settings(user.token)).status).toBe(401);
    expect((await settings(token.token)).status).toBe(401);
    expect((await app.request('POST', '/auth/refresh', { body: { refresh_token: user.refreshToken } })).status).toBe(401);
    const login = await app.request('POST', '/api/admin/users/login', { body: { email: user.email, password: user.password } });
    expect(login.status).toBe(401);
    const [row] = await sql<{ n: number }>(
      app,
      'select count(*)::int as n from api_tokens where id = ? and revoked_at is not null',
      [token.id],
    );
    expect(row!.n).toBe(1);
  });
});

describe('rules', () => {
  test('when the built-in admin role is changed or deleted, then 409 ROLE_BUILT_IN and it is unchanged', async () => {
    for (const res of [
      await patchRole(adminRoleId, { permissions: ['view_audit'] }),
      await patchRole(adminRoleId, { name: 'root' }),
      await app.request('DELETE', `/api/admin/roles/${adminRoleId}`, { token: admin }),
    ]) {
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('ROLE_BUILT_IN');
    }
    const role = await app.request('GET', `/api/admin/roles/${adminRoleId}`, { token: admin });
    expect(role.body.name).toBe('admin');
  });

  test('when a role still held is deleted, then 409 ROLE_IN_USE; once nobody holds it, then 204', async () => {
    const user = await createStaff(app, ['view_audit'], admin);
    const roleId = await roleOf(user);
    const refused = await app.request('DELETE', `/api/admin/roles/${roleId}`, { token: admin });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('ROLE_IN_USE');
    expect((await patchUser(user.id, { role_ids: [] })).status).toBe(200);
    expect((await app.request('DELETE', `/api/admin/roles/${roleId}`, { token: admin })).status).toBe(204);
    expect((await app.request('GET', `/api/admin/roles/${roleId}`, { token: admin })).status).toBe(404);
  });

  test('when a manager adds a permission it lacks to a role, or touches the admin role of a user, then 403', async () => {
    const manager = await createStaff(app, ['manage_users'], admin);
    const role = await app.request('POST', '/api/admin/roles', {
      token: manager.token,
      body: { name: `m-${suffix()}`, permissions: [] },
    });
    expect((await patchRole(role.body.id, { permissions: ['manage_settings'] }, manager.token)).status).toBe(403);
    expect((await patchRole(role.body.id, { permissions: ['manage_users'] }, manager.token)).status).toBe(200);
    const user = await createStaff(app, ['view_audit'], admin);
    expect((await patchUser(user.id, { role_ids: [adminRoleId] }, manager.token)).status).toBe(403);
    const adminUser = (await sql<{ id: string }>(app, 'select id from staff_users where email = ?', [ADMIN.email]))[0]!.id;
    expect((await patchUser(adminUser, { role_ids: [] }, manager.token)).status).toBe(403);
  });

  test('when the last active holder of manage_users would lose it, then 409 LAST_USER_MANAGER and nothing changes', async () => {
    // A deployment of its own: here the bootstrap admin is the only user manager.
    const solo = await startTestApp({ label: 'lastmanager', env: { ROLE: 'api' } });
    try {
      const token = await adminToken(solo);
      const me = (await sql<{ id: string }>(solo, 'select id from staff_users where email = ?', [ADMIN.email]))[0]!.id;
      for (const body of [{ is_active: false }, { role_ids: [] }]) {
        const res = await solo.request('PATCH', `/api/admin/users/${me}`, { token, body });
        expect(res.status).toBe(409);
        expect(res.body.code).toBe('LAST_USER_MANAGER');
      }
      // With a second manager holding a plain role, the admin may step down; then that role cannot lose manage_users.
      const manager = await createStaff(solo, ['manage_users'], token);
      expect((await solo.request('PATCH', `/api/admin/users/${me}`, { token, body: { is_active: false } })).status).toBe(200);
      const roleId = (await solo.request('GET', `/api/admin/users/${manager.id}`, { token: manager.token })).body.role_ids[0];
      const res = await solo.request('PATCH', `/api/admin/roles/${roleId}`, { token: manager.token, body: { permissions: [] } });
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('LAST_USER_MANAGER');
    } finally {
      await solo.stop();
    }
  });

  test('when two managers deactivate each other at once and nobody else manages users, then exactly one succeeds', async () => {
    const solo = await startTestApp({ label: 'demote-race', env: { ROLE: 'api' } });
    try {
      const token = await adminToken(solo);
      const a = await createStaff(solo, ['manage_users'], token);
      const b = await createStaff(solo, ['manage_users'], token);
      const me = (await sql<{ id: string }>(solo, 'select id from staff_users where email = ?', [ADMIN.email]))[0]!.id;
      expect((await solo.request('PATCH', `/api/admin/users/${me}`, { token: a.token, body: { role_ids: [] } })).status).toBe(
        403,
      );
      await sql(solo, 'delete from staff_user_roles where staff_user_id = ?', [me]);
      const [ab, ba] = await Promise.all([
        solo.request('PATCH', `/api/admin/users/${b.id}`, { token: a.token, body: { is_active: false } }),
        solo.request('PATCH', `/api/admin/users/${a.id}`, { token: b.token, body: { is_active: false } }),
      ]);
      // The loser is refused: 409 when the rule stops it, 401 when the winner's change revoked its session first.
      expect([ab.status, ba.status].filter((s) => s === 200)).toHaveLength(1);
      const loser = [ab, ba].find((r) => r.status !== 200)!;
      expect([409, 401]).toContain(loser.status);
      const [row] = await sql<{ n: number }>(
        solo,
        'select count(*)::int as n from staff_users where is_active and id in (?, ?)',
        [a.id, b.id],
      );
      expect(row!.n).toBe(1);
    } finally {
      await solo.stop();
    }
  });
});

describe('API tokens', () => {
  test('when a token is used many times within a minute, then last_used_at is written once', async () => {
    const user = await createStaff(app, ['manage_settings', 'manage_api_tokens'], admin);
    const token = await apiTokenOf(user, ['manage_settings']);
    const lastUsed = async () => {
      const at = (await sql<{ at: string | null }>(app, 'select last_used_at as at from api_tokens where id = ?', [token.id]))[0]!
        .at;
      return at === null ? null : new Date(at);
    };
    expect(await lastUsed()).toBeNull();
    expect((await settings(token.token)).status).toBe(200);
    const first = await lastUsed();
    expect(first).toBeInstanceOf(Date);
    for (let i = 0; i < 5; i++) expect((await settings(token.token)).status).toBe(200);
    expect((await lastUsed())!.getTime()).toBe(first!.getTime());
    const listed = await app.request('GET', '/api/crm/settings/api-tokens', { token: user.token });
    expect(listed.body.items.find((t: { id: string }) => t.id === token.id).last_used_at).toBe(first!.toISOString());
  });
});
