import { randomBytes } from 'node:crypto';
import { adminToken, createStaff, loginStaff, type LoggedIn } from '../../helpers/identity';
import { sql, startTestApp, type TestApp } from '../../helpers/test-app';

/**
 * No privilege escalation through roles (issue 8): a staff user grants only what it holds,
 * in a role it creates or to a user it creates, and only an admin hands out the admin role.
 * Walked with a manage_users-only user, as the probe did.
 */
let app: TestApp;
let admin: string;
let manager: LoggedIn;
let adminRoleId: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'escalation' });
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
