import { randomBytes, randomUUID } from 'node:crypto';
import { ROUTES } from '../../../src/api/routes';
import type { Permission } from '../../../src/domain/identity/permissions';
import { ADMIN, adminToken, loginStaff } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';

let app: TestApp;
let admin: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'idroles', env: { ROLE: 'api' } });
  admin = await adminToken(app);
});
afterAll(() => app?.stop());

const suffix = () => randomBytes(4).toString('hex');
const PASSWORD = 'a-long-enough-password';

async function createRole(permissions: string[], name = `role-${suffix()}`) {
  return app.request('POST', '/api/admin/roles', { token: admin, body: { name, permissions } });
}

async function createUser(roleIds: string[], email = `user-${suffix()}@broker.test`) {
  return app.request('POST', '/api/admin/users', {
    token: admin,
    body: { email, password: PASSWORD, full_name: 'Some One', role_ids: roleIds },
  });
}

describe('roles', () => {
  test('when the admin creates a role, then it answers 201 with the role and GET /api/admin/roles lists it', async () => {
    const name = `desk-${suffix()}`;
    const res = await createRole(['view_customers', 'manage_customers', 'view_customers'], name);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name,
      permissions: ['manage_customers', 'view_customers'],
      built_in: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const list = await app.request('GET', '/api/admin/roles', { token: admin });
    expect(list.status).toBe(200);
    expect(list.body.items).toContainEqual(res.body);
    expect(list.body.items).toContainEqual(expect.objectContaining({ name: 'admin', built_in: true }));
  });

  test('when a role names an unknown permission, then 422 literal_error at its index and no role is created', async () => {
    const name = `bad-${suffix()}`;
    const res = await createRole(['view_customers', 'launch_rockets', 'view_audit', 'VIEW_AUDIT'], name);
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'permissions', 1], type: 'literal_error' }),
      expect.objectContaining({ loc: ['body', 'permissions', 3], type: 'literal_error' }),
    ]);
    const list = await app.request('GET', '/api/admin/roles', { token: admin });
    expect(list.body.items.map((r: { name: string }) => r.name)).not.toContain(name);
  });

  test('when a role name is taken (also with surrounding spaces), then 409 NAME_TAKEN and the first role is unchanged', async () => {
    const name = `dup-${suffix()}`;
    const first = await createRole(['view_audit'], name);
    expect(first.status).toBe(201);
    for (const again of [name, `  ${name} `]) {
      const res = await createRole(['manage_users'], again);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ detail: expect.any(String), code: 'NAME_TAKEN' });
    }
    const list = await app.request('GET', '/api/admin/roles', { token: admin });
    expect(list.body.items.filter((r: { name: string }) => r.name === name)).toEqual([first.body]);
  });

  test('when the role body is missing its fields, then 422 names each of them', async () => {
    const res = await app.request('POST', '/api/admin/roles', { token: admin, body: {} });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { loc: unknown[]; type: string }) => [d.loc, d.type])).toEqual(
      expect.arrayContaining([
        [['body', 'name'], 'missing'],
        [['body', 'permissions'], 'missing'],
      ]),
    );
  });
});

describe('staff users', () => {
  test('when the admin creates a staff user, then 201 without any password or hash, and the user can log in', async () => {
    const role = (await createRole(['view_audit'])).body;
    const email = `new-${suffix()}@broker.test`;
    const res = await createUser([role.id], email);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      email,
      full_name: 'Some One',
      is_active: true,
      totp_enabled: false,
      role_ids: [role.id],
      data_scope: 'all',
      team_ids: [],
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(res.text).not.toContain(PASSWORD);
    expect(res.text).not.toMatch(/argon2|password/i);
    const pair = await loginStaff(app, email, PASSWORD);
    expect(pair.access_token).toEqual(expect.any(String));
  });

  test('when a staff email differs from an existing one only in case, then 409 and no second user exists', async () => {
    const local = `Case-${suffix()}`;
    expect((await createUser([], `${local}@Broker.Test`)).status).toBe(201);
    const again = await createUser([], `${local.toLowerCase()}@broker.test`);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ detail: expect.any(String), code: expect.stringMatching(/^[A-Z_]+$/) });
    const upper = await createUser([], `${local.toUpperCase()}@BROKER.TEST`);
    expect(upper.status).toBe(409);
    // Login is case-insensitive too, and the first password is the one that works.
    expect((await loginStaff(app, `${local.toUpperCase()}@broker.test`, PASSWORD)).access_token).toEqual(expect.any(String));
    const page = await app.request('GET', '/api/admin/users?page_size=100', { token: admin });
    const matching = page.body.items.filter(
      (u: { email: string }) => u.email.toLowerCase() === `${local}@broker.test`.toLowerCase(),
    );
    expect(matching).toHaveLength(1);
  });

  test('when a role id is unknown, then 422 at its index in role_ids and no user is created', async () => {
    const role = (await createRole(['view_audit'])).body;
    const email = `ghost-${suffix()}@broker.test`;
    const res = await createUser([role.id, randomUUID(), role.id, randomUUID()], email);
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'role_ids', 1] }),
      expect.objectContaining({ loc: ['body', 'role_ids', 3] }),
    ]);
    const login = await app.request('POST', '/api/admin/users/login', { body: { email, password: PASSWORD } });
    expect(login.status).toBe(401);
  });

  test('when a role id is not a uuid, then 422 uuid_parsing at its index', async () => {
    const res = await createUser(['not-a-uuid']);
    expect(res.status).toBe(422);
    expect(res.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'role_ids', 0], type: 'uuid_parsing' })]);
  });

  test("when a staff user has two roles, then it may call exactly the staff routes its roles' union allows", async () => {
    const granted: Permission[] = ['view_customers', 'manage_customers', 'view_audit'];
    const a = (await createRole(['view_customers'])).body;
    const b = (await createRole(['manage_customers', 'view_audit'])).body;
    const email = `union-${suffix()}@broker.test`;
    expect((await createUser([a.id, b.id], email)).status).toBe(201);
    const token = (await loginStaff(app, email, PASSWORD)).access_token;

    const staffRoutes = ROUTES.filter((r) => r.access.kind === 'staff');
    const seen = { allowed: 0, refused: 0 };
    for (const route of staffRoutes) {
      const permission = (route.access as { permission: Permission }).permission;
      const res = await app.request(
        route.method.toUpperCase(),
        route.path.replace(/\{[^}]+\}/g, () => randomUUID()),
        {
          token,
        },
      );
      const refused = res.status === 403;
      expect({ route: `${route.method} ${route.path}`, refused }).toEqual({
        route: `${route.method} ${route.path}`,
        refused: !granted.includes(permission),
      });
      expect(res.status).not.toBe(401);
      seen[refused ? 'refused' : 'allowed']++;
    }
    // Both outcomes must have happened, or the walk proves nothing.
    expect(seen.allowed).toBeGreaterThan(0);
    expect(seen.refused).toBeGreaterThan(0);

    // And what it is allowed it can really do.
    const created = await app.request('POST', '/api/crm/customers', {
      token,
      body: { email: `c-${suffix()}@broker.test`, password: PASSWORD, first_name: 'A', last_name: 'B' },
    });
    expect(created.status).toBe(201);
    expect((await app.request('GET', `/api/crm/customers/${created.body.id}`, { token })).status).toBe(200);
  });

  test('when a staff user has no role, then every staff route refuses it with 403', async () => {
    const email = `norole-${suffix()}@broker.test`;
    const res = await app.request('POST', '/api/admin/users', {
      token: admin,
      body: { email, password: PASSWORD, full_name: 'No Role' },
    });
    expect(res.status).toBe(201);
    expect(res.body.role_ids).toEqual([]);
    const token = (await loginStaff(app, email, PASSWORD)).access_token;
    for (const route of ROUTES.filter((r) => r.access.kind === 'staff')) {
      const r = await app.request(
        route.method.toUpperCase(),
        route.path.replace(/\{[^}]+\}/g, () => randomUUID()),
        { token },
      );
      expect({ route: route.path, status: r.status }).toEqual({ route: route.path, status: 403 });
    }
  });

  test('when the staff list is paged, then pages are disjoint, ordered by email, and total counts every user', async () => {
    // Several roles a user: a page must count users, not user-role rows.
    const roles = [(await createRole(['view_audit'])).body.id, (await createRole(['view_customers'])).body.id];
    roles.push((await createRole(['manage_settings'])).body.id);
    for (let i = 0; i < 5; i++) expect((await createUser(i % 2 ? roles : [])).status).toBe(201);
    const all = await app.request('GET', '/api/admin/users?page_size=100', { token: admin });
    expect(all.status).toBe(200);
    const total = all.body.total as number;
    expect(total).toBeGreaterThanOrEqual(6);
    expect(all.body.items).toHaveLength(total);
    expect(all.body.items.map((u: { email: string }) => u.email)).toContain(ADMIN.email);

    const pageSize = 2;
    const seen: string[] = [];
    for (let page = 1; page <= Math.ceil(total / pageSize); page++) {
      const res = await app.request('GET', `/api/admin/users?page=${page}&page_size=${pageSize}`, { token: admin });
      expect(res.body).toEqual(expect.objectContaining({ page, page_size: pageSize, total }));
      expect(res.body.items.length).toBe(Math.min(pageSize, total - (page - 1) * pageSize));
      // Each user on a page carries all its roles (in no promised order).
      const sorted = (u: { role_ids: string[] }) => ({ ...u, role_ids: [...u.role_ids].sort() });
      for (const u of res.body.items)
        expect(sorted(u)).toEqual(sorted(all.body.items.find((a: { id: string }) => a.id === u.id)));
      seen.push(...res.body.items.map((u: { email: string }) => u.email));
    }
    expect(seen).toEqual(all.body.items.map((u: { email: string }) => u.email));
    expect(new Set(seen).size).toBe(total);
    expect([...seen].sort()).toEqual(seen);

    const beyond = await app.request('GET', `/api/admin/users?page=${total + 1}&page_size=${pageSize}`, { token: admin });
    expect(beyond.body).toEqual({ items: [], page: total + 1, page_size: pageSize, total });

    const bad = await app.request('GET', '/api/admin/users?page=0&page_size=1000', { token: admin });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual(
      expect.arrayContaining([
        ['query', 'page'],
        ['query', 'page_size'],
      ]),
    );
  });

  test('when a staff user is listed, then its role ids are shown and no password or hash is', async () => {
    const role = (await createRole(['view_audit'])).body;
    const email = `listed-${suffix()}@broker.test`;
    expect((await createUser([role.id], email)).status).toBe(201);
    const res = await app.request('GET', '/api/admin/users?page_size=100', { token: admin });
    expect(res.body.items).toContainEqual(expect.objectContaining({ email, role_ids: [role.id] }));
    expect(res.text).not.toMatch(/argon2|password/i);
  });
});
