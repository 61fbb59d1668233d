import { randomBytes } from 'node:crypto';
import { ADMIN, adminToken, createStaff, loginStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';

/**
 * No privilege escalation through roles: a staff user grants only what it holds, in a role
 * it creates or to a user it creates, and only an admin hands out the admin role; and it acts
 * (deactivates, re-roles, revokes credentials) only on users whose permissions it all holds,
 * and changes or deletes only roles whose permissions it all holds.
 * Walked with a manage_users-only user, as the probe did.
 */
let app: TestApp;
let admin: string;
let manager: LoggedIn;
let adminRoleId: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'escalation', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  manager = await createStaff(app, ['manage_users'], admin);
  const roles = await app.request('GET', '/api/admin/roles', { token: admin });
  adminRoleId = roles.body.items.find((r: { name: string }) => r.name === 'admin').id;
});
afterAll(() => app?.stop());

const suffix = () => randomBytes(4).toString('hex');
const roleCount = async () => Number((await sql<{ n: string }>(app, 'select count(*)::text as n from roles'))[0]!.n);
const userCount = async () => Number((await sql<{ n: string }>(app, 'select count(*)::text as n from staff_users'))[0]!.n);

function createRole(token: string, permissions: string[], name = `role-${suffix()}`) {
  return app.request('POST', '/api/admin/roles', { token, body: { name, permissions } });
}

function createUser(token: string, roleIds: string[]) {
  return app.request('POST', '/api/admin/users', {
    token,
    body: { email: `hire-${suffix()}@broker.test`, password: 'quartz-ledger-9917', full_name: 'New Hire', role_ids: roleIds },
  });
}

describe('granting permissions', () => {
  test('when a manage_users-only user creates a role with a permission it lacks, then 403 and no role exists', async () => {
    const before = await roleCount();
    const res = await createRole(manager.token, ['manage_users', 'manage_settings']);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ code: 'FORBIDDEN', detail: expect.stringContaining('manage_settings') });
    expect(await roleCount()).toBe(before);
  });

  test('when it creates a role with only what it holds, then 201', async () => {
    expect((await createRole(manager.token, ['manage_users'])).status).toBe(201);
    expect((await createRole(manager.token, [])).status).toBe(201);
  });

  test('when it creates a user holding a role with more than it holds, then 403 and no user exists', async () => {
    const wide = await createRole(admin, ['manage_users', 'approve_withdrawals']);
    const before = await userCount();
    const res = await createUser(manager.token, [wide.body.id]);
    expect(res.status).toBe(403);
    expect(res.body.detail).toContain('approve_withdrawals');
    expect(await userCount()).toBe(before);
  });

  test('when it assigns the built-in admin role, then 403 and no user exists', async () => {
    const before = await userCount();
    const res = await createUser(manager.token, [adminRoleId]);
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/admin/);
    expect(await userCount()).toBe(before);
  });

  test('when a user holding every permission but not the admin role assigns the admin role, then 403', async () => {
    const all = await app.request('GET', '/api/admin/roles', { token: admin });
    const everything = all.body.items.find((r: { name: string }) => r.name === 'admin').permissions;
    const powerful = await createStaff(app, everything, admin);
    expect((await createUser(powerful.token, [adminRoleId])).status).toBe(403);
  });

  test('when the admin assigns the admin role, then 201 and the new user holds every permission', async () => {
    const res = await createUser(admin, [adminRoleId]);
    expect(res.status).toBe(201);
    const pair = await loginStaff(app, res.body.email, 'quartz-ledger-9917');
    expect((await app.request('GET', '/api/admin/settings', { token: pair.access_token })).status).toBe(200);
  });

  test('when an API token with manage_users creates a role beyond its scopes, then 403; an API token never assigns admin', async () => {
    const issued = await app.request('POST', '/api/crm/settings/api-tokens', {
      token: admin,
      body: { name: `t-${suffix()}`, scopes: ['manage_users'] },
    });
    expect(issued.status).toBe(201);
    const apiToken = issued.body.token as string;
    expect((await createRole(apiToken, ['manage_users', 'view_audit'])).status).toBe(403);
    expect((await createUser(apiToken, [adminRoleId])).status).toBe(403);
    expect((await createRole(apiToken, ['manage_users'])).status).toBe(201);
  });

  test('when the escalation is attempted, then the manager still cannot reach what it was refused', async () => {
    const pair = await loginStaff(app, manager.email, manager.password);
    expect((await app.request('GET', '/api/admin/settings', { token: pair.access_token })).status).toBe(403);
  });
});

describe('changing and deleting roles', () => {
  const roleRow = async (id: string) => (await sql(app, 'select name, permissions from roles where id = ?', [id]))[0];

  test('when a manage_users-only user renames, re-permissions or deletes a role holding more than it holds, then 403 naming it and the role is unchanged', async () => {
    const wide = (await createRole(admin, ['manage_users', 'manage_settings'])).body;
    const before = await roleRow(wide.id);
    for (const body of [{ name: `taken-over-${suffix()}` }, { permissions: ['manage_users'] }, { permissions: [] }]) {
      const res = await app.request('PATCH', `/api/admin/roles/${wide.id}`, { token: manager.token, body });
      expect([body, res.status, res.body.code]).toEqual([body, 403, 'FORBIDDEN']);
      expect(res.body.detail).toContain('manage_settings');
    }
    const removed = await app.request('DELETE', `/api/admin/roles/${wide.id}`, { token: manager.token });
    expect(removed.status).toBe(403);
    expect(removed.body.detail).toContain('manage_settings');
    expect(await roleRow(wide.id)).toEqual(before);
  });

  test('when the role holds only what the user holds, then renaming, narrowing and deleting it work', async () => {
    const mine = (await createRole(admin, ['manage_users'])).body;
    const renamed = await app.request('PATCH', `/api/admin/roles/${mine.id}`, {
      token: manager.token,
      body: { name: `mine-${suffix()}`, permissions: [] },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.permissions).toEqual([]);
    expect((await app.request('DELETE', `/api/admin/roles/${mine.id}`, { token: manager.token })).status).toBe(204);
    expect(await roleRow(mine.id)).toBeUndefined();
  });
});

describe('role names', () => {
  test('when a role name differs from another only in case, then 409 NAME_TAKEN', async () => {
    for (const name of ['ADMIN', 'Admin', ' admin ']) {
      const res = await createRole(admin, [], name);
      expect(res.status).toBe(409);
      expect(res.body.code).toBe('NAME_TAKEN');
    }
    const name = `Desk-${suffix()}`;
    expect((await createRole(admin, [], name)).status).toBe(201);
    expect((await createRole(admin, [], name.toLowerCase())).status).toBe(409);
  });
});

describe('acting on other staff users', () => {
  const adminId = async () =>
    (await sql<{ id: string }>(app, 'select id from staff_users where email = ?', [ADMIN.email]))[0]!.id;
  const userRow = async (id: string) =>
    (
      await sql<{ is_active: boolean; full_name: string; role_ids: string[] }>(
        app,
        `select u.is_active, u.full_name, array(select role_id::text from staff_user_roles where staff_user_id = u.id order by 1) as role_ids
           from staff_users u where u.id = ?`,
        [id],
      )
    )[0]!;
  const patchUser = (token: string, id: string, body: unknown) => app.request('PATCH', `/api/admin/users/${id}`, { token, body });

  test('when a manage_users-only user deactivates, renames or re-roles the admin, then 403 and the admin is unchanged and still signed in', async () => {
    const id = await adminId();
    const before = await userRow(id);
    for (const body of [{ is_active: false }, { role_ids: [] }, { full_name: 'Demoted' }]) {
      const res = await patchUser(manager.token, id, body);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ code: 'FORBIDDEN', detail: expect.stringContaining('manage_settings') });
    }
    expect(await userRow(id)).toEqual(before);
    expect((await app.request('GET', '/api/admin/settings', { token: admin })).status).toBe(200);
  });

  test('when it acts on a user holding one permission more than itself, then 403 naming it; the user keeps working', async () => {
    const wider = await createStaff(app, ['manage_users', 'view_audit'], admin);
    const res = await patchUser(manager.token, wider.id, { is_active: false });
    expect(res.status).toBe(403);
    expect(res.body.detail).toContain('view_audit');
    expect((await userRow(wider.id)).is_active).toBe(true);
    expect((await app.request('GET', '/api/admin/audit', { token: wider.token })).status).toBe(200);
  });

  test('when it acts on a user whose permissions are a subset of its own, then deactivating, reactivating and re-roling work', async () => {
    const peer = await createStaff(app, ['manage_users'], admin);
    const clerk = await createStaff(app, [], admin);
    expect((await patchUser(manager.token, clerk.id, { is_active: false })).status).toBe(200);
    expect((await app.request('GET', '/auth/sessions', { token: clerk.token })).status).toBe(401);
    expect((await patchUser(manager.token, clerk.id, { is_active: true })).status).toBe(200);
    const peerRole = (await userRow(peer.id)).role_ids;
    expect((await patchUser(manager.token, clerk.id, { role_ids: peerRole })).status).toBe(200);
    expect((await userRow(clerk.id)).role_ids).toEqual(peerRole);
    expect((await patchUser(manager.token, peer.id, { is_active: false })).status).toBe(200);
  });

  test("when a manage_api_tokens holder revokes an admin's API token, then 403 and the token works; a token of a lesser user it may revoke", async () => {
    const keeper = await createStaff(app, ['manage_api_tokens', 'view_audit'], admin);
    const issue = async (token: string, scopes: string[]) => {
      const res = await app.request('POST', '/api/crm/settings/api-tokens', { token, body: { name: `t-${suffix()}`, scopes } });
      expect(res.status).toBe(201);
      return res.body as { id: string; token: string };
    };
    const adminsToken = await issue(admin, ['view_audit']);
    const refused = await app.request('DELETE', `/api/crm/settings/api-tokens/${adminsToken.id}`, { token: keeper.token });
    expect(refused.status).toBe(403);
    expect((await app.request('GET', '/api/admin/audit', { token: adminsToken.token })).status).toBe(200);

    const lesser = await createStaff(app, ['view_audit', 'manage_api_tokens'], admin);
    const lessersToken = await issue(lesser.token, ['view_audit']);
    expect((await app.request('DELETE', `/api/crm/settings/api-tokens/${lessersToken.id}`, { token: keeper.token })).status).toBe(
      204,
    );
    expect((await app.request('GET', '/api/admin/audit', { token: lessersToken.token })).status).toBe(401);
  });
});
