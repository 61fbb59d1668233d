import { randomBytes, randomUUID } from 'node:crypto';
import { ADMIN, adminToken, createStaff, type LoggedIn } from '../../helpers/identity';
import { clockPast, startTestApp, type TestApp, type TestResponse } from '../../helpers/test-app';

interface AuditRow {
  id: string;
  actor_type: 'user' | 'api_token' | 'system' | 'integration';
  actor_id: string | null;
  actor: string;
  api_token_id: string | null;
  action: string;
  entity_type: string;
  entity_id: string | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  request_id: string | null;
  created_at: string;
}

let app: TestApp;
let admin: string;
let adminId: string;
/** Everything secret this file sent or received: none of it may reach the audit trail. */
const secrets: string[] = [ADMIN.password];

beforeAll(async () => {
  app = await startTestApp({ label: 'idaudit', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  const users = await app.request('GET', '/api/admin/users?page_size=100', { token: admin });
  adminId = users.body.items.find((u: { email: string }) => u.email === ADMIN.email).id;
});
afterAll(() => app?.stop());

const tag = () => randomBytes(4).toString('hex');

async function audit(query: Record<string, string | number> = {}, token = admin): Promise<TestResponse> {
  const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])).toString();
  return app.request('GET', `/api/admin/audit${qs ? `?${qs}` : ''}`, { token });
}

/** The rows about one entity, as the API lists them. */
async function rowsFor(entityType: string, entityId: string): Promise<AuditRow[]> {
  const res = await audit({ entity_type: entityType, entity_id: entityId, page_size: 200 });
  expect(res.status).toBe(200);
  return res.body.items;
}

async function countAll(): Promise<number> {
  return (await audit({ page_size: 1 })).body.total;
}

/** Asserts one audit row for the change answered by `res`, made by `actor`, within the request's time. */
function expectRow(
  rows: AuditRow[],
  res: TestResponse,
  expected: Partial<AuditRow> & Pick<AuditRow, 'action' | 'entity_type'>,
  window: { from: number; to: number },
): AuditRow {
  expect(rows).toHaveLength(1);
  const row = rows[0]!;
  expect(row).toEqual({
    id: expect.any(String),
    actor_type: 'user',
    actor_id: adminId,
    actor: `user:${adminId}`,
    api_token_id: null,
    entity_id: expect.any(String),
    before: null,
    after: expect.any(Object),
    created_at: expect.any(String),
    ...expected,
    // The request id ties the row to the request that made it.
    request_id: res.headers.get('x-request-id'),
  });
  const at = Date.parse(row.created_at);
  expect(at).toBeGreaterThanOrEqual(window.from);
  expect(at).toBeLessThanOrEqual(window.to);
  return row;
}

async function timed(fn: () => Promise<TestResponse>): Promise<{ res: TestResponse; window: { from: number; to: number } }> {
  const from = Date.now();
  const res = await fn();
  return { res, window: { from, to: Date.now() } };
}

describe('what is recorded', () => {
  test('when the admin creates a role, then one audit row names the admin, role.created, the role and its state after', async () => {
    const { res, window } = await timed(() =>
      app.request('POST', '/api/admin/roles', { token: admin, body: { name: `r-${tag()}`, permissions: ['view_audit'] } }),
    );
    expect(res.status).toBe(201);
    expectRow(
      await rowsFor('role', res.body.id),
      res,
      { action: 'role.created', entity_type: 'role', entity_id: res.body.id, after: res.body },
      window,
    );
  });

  test('when the admin creates a staff user, then one audit row records it without the password or its hash', async () => {
    const password = `pw-${tag()}-long-enough`;
    secrets.push(password);
    const { res, window } = await timed(() =>
      app.request('POST', '/api/admin/users', {
        token: admin,
        body: { email: `s-${tag()}@broker.test`, password, full_name: 'Audited', role_ids: [] },
      }),
    );
    expect(res.status).toBe(201);
    expectRow(
      await rowsFor('staff_user', res.body.id),
      res,
      { action: 'staff_user.created', entity_type: 'staff_user', entity_id: res.body.id, after: res.body },
      window,
    );
  });

  test('when the admin creates a customer, then one audit row records it without the password or its hash', async () => {
    const password = `pw-${tag()}-customer`;
    secrets.push(password);
    const { res, window } = await timed(() =>
      app.request('POST', '/api/crm/customers', {
        token: admin,
        body: { email: `c-${tag()}@client.test`, password, first_name: 'Au', last_name: 'Dit' },
      }),
    );
    expect(res.status).toBe(201);
    expectRow(
      await rowsFor('customer', res.body.id),
      res,
      { action: 'customer.created', entity_type: 'customer', entity_id: res.body.id, after: res.body },
      window,
    );
  });

  test('when the admin changes the settings, then each change has one audit row whose before and after are the stored states', async () => {
    // Several changes: a row whose "after" were taken before the write stamped updated_at would
    // differ from the stored row by a millisecond only now and then.
    for (const ttl of [1200, 1500, 1800, 2100, 2400]) {
      const before = await app.request('GET', '/api/admin/settings', { token: admin });
      const previous = await rowsFor('broker_settings', '1');
      const { res, window } = await timed(() =>
        app.request('PATCH', '/api/admin/settings', { token: admin, body: { access_token_ttl_seconds: ttl } }),
      );
      expect(res.status).toBe(200);
      const rows = (await rowsFor('broker_settings', '1')).filter((r) => !previous.some((p) => p.id === r.id));
      const stored = await app.request('GET', '/api/admin/settings', { token: admin });
      expect(stored.body).toEqual(res.body);
      expectRow(
        rows,
        res,
        { action: 'settings.updated', entity_type: 'broker_settings', entity_id: '1', before: before.body, after: stored.body },
        window,
      );
    }
  });

  test('when an API token is created and revoked, then two audit rows record it, neither with the token text', async () => {
    const created = await timed(() =>
      app.request('POST', '/api/crm/settings/api-tokens', { token: admin, body: { name: 'audited', scopes: ['view_audit'] } }),
    );
    expect(created.res.status).toBe(201);
    secrets.push(created.res.body.token);
    const { token: _text, ...view } = created.res.body;
    expectRow(
      await rowsFor('api_token', view.id),
      created.res,
      { action: 'api_token.created', entity_type: 'api_token', entity_id: view.id, after: view },
      created.window,
    );

    const revoked = await timed(() => app.request('DELETE', `/api/crm/settings/api-tokens/${view.id}`, { token: admin }));
    expect(revoked.res.status).toBe(204);
    const rows = (await rowsFor('api_token', view.id)).filter((r) => r.action === 'api_token.revoked');
    const row = expectRow(
      rows,
      revoked.res,
      { action: 'api_token.revoked', entity_type: 'api_token', entity_id: view.id },
      revoked.window,
    );
    expect(row.after).toEqual(expect.objectContaining({ id: view.id, revoked_at: expect.any(String) }));
  });

  test('when a change is made with an API token, then the row names the token and its issuer as the actor', async () => {
    // view_customer_pii: the answer then shows the email whole, as the audit row keeps it.
    const issuer: LoggedIn = await createStaff(
      app,
      ['manage_api_tokens', 'manage_customers', 'manage_users', 'view_customer_pii'],
      admin,
    );
    const issued = await app.request('POST', '/api/crm/settings/api-tokens', {
      token: issuer.token,
      body: { name: 'robot', scopes: ['manage_customers', 'manage_users', 'manage_api_tokens', 'view_customer_pii'] },
    });
    expect(issued.status).toBe(201);
    secrets.push(issued.body.token);
    // The token creation itself was made by the issuer's session.
    expect((await rowsFor('api_token', issued.body.id))[0]).toEqual(
      expect.objectContaining({ actor_type: 'user', actor_id: issuer.id, api_token_id: null }),
    );

    const made = [
      await timed(() =>
        app.request('POST', '/api/crm/customers', {
          token: issued.body.token,
          body: { email: `bot-${tag()}@client.test`, password: 'robot-password-1', first_name: 'R', last_name: 'B' },
        }),
      ),
      await timed(() =>
        app.request('POST', '/api/admin/roles', { token: issued.body.token, body: { name: `bot-${tag()}`, permissions: [] } }),
      ),
    ];
    const [customer, role] = made;
    expect(customer!.res.status).toBe(201);
    expect(role!.res.status).toBe(201);
    const actor = {
      actor_type: 'api_token' as const,
      actor_id: issuer.id,
      actor: `api_token:${issued.body.id}`,
      api_token_id: issued.body.id,
    };
    expectRow(
      await rowsFor('customer', customer!.res.body.id),
      customer!.res,
      {
        ...actor,
        action: 'customer.created',
        entity_type: 'customer',
        entity_id: customer!.res.body.id,
        after: customer!.res.body,
      },
      customer!.window,
    );
    expectRow(
      await rowsFor('role', role!.res.body.id),
      role!.res,
      { ...actor, action: 'role.created', entity_type: 'role', entity_id: role!.res.body.id, after: role!.res.body },
      role!.window,
    );

    const revoked = await app.request('DELETE', `/api/crm/settings/api-tokens/${issued.body.id}`, { token: issued.body.token });
    expect(revoked.status).toBe(204);
    const revokedRow = (await rowsFor('api_token', issued.body.id)).find((r) => r.action === 'api_token.revoked');
    expect(revokedRow).toEqual(expect.objectContaining(actor));
  });
});

describe('what is not recorded', () => {
  test('when a change fails (duplicate role, staff email or customer email; bad scopes; unknown role), then no audit row is left', async () => {
    const roleName = `dup-${tag()}`;
    const email = `dup-${tag()}@broker.test`;
    const role = await app.request('POST', '/api/admin/roles', { token: admin, body: { name: roleName, permissions: [] } });
    expect(role.status).toBe(201);
    const user = await app.request('POST', '/api/admin/users', {
      token: admin,
      body: { email, password: 'a-long-password-1', full_name: 'D', role_ids: [] },
    });
    expect(user.status).toBe(201);
    const customer = await app.request('POST', '/api/crm/customers', {
      token: admin,
      body: { email, password: 'a-long-password-1', first_name: 'D', last_name: 'U' },
    });
    expect(customer.status).toBe(201);
    const total = await countAll();

    const failures: Array<[number, TestResponse]> = [
      [
        409,
        await app.request('POST', '/api/admin/roles', { token: admin, body: { name: roleName, permissions: ['view_audit'] } }),
      ],
      [
        409,
        await app.request('POST', '/api/admin/users', {
          token: admin,
          body: { email: email.toUpperCase(), password: 'a-long-password-2', full_name: 'E', role_ids: [] },
        }),
      ],
      [
        409,
        await app.request('POST', '/api/crm/customers', {
          token: admin,
          body: { email: email.toUpperCase(), password: 'a-long-password-2', first_name: 'E', last_name: 'F' },
        }),
      ],
      [
        422,
        await app.request('POST', '/api/admin/users', {
          token: admin,
          body: { email: `other-${tag()}@broker.test`, password: 'a-long-password-2', full_name: 'E', role_ids: [randomUUID()] },
        }),
      ],
      [422, await app.request('PATCH', '/api/admin/settings', { token: admin, body: { access_token_ttl_seconds: 5 } })],
      [404, await app.request('DELETE', `/api/crm/settings/api-tokens/${randomUUID()}`, { token: admin })],
    ];
    expect(failures.map(([, res]) => res.status)).toEqual(failures.map(([status]) => status));
    expect(await countAll()).toBe(total);
    // Nor in the table behind the API.
    const rows = await app.runtime.services.orm.em
      .fork()
      .getConnection()
      .execute<Array<{ n: string }>>('select count(*) as n from audit_entries');
    expect(Number(rows[0]!.n)).toBe(total);
  });

  test('when reads happen, then no audit row is written', async () => {
    const total = await countAll();
    await app.request('GET', '/api/admin/roles', { token: admin });
    await app.request('GET', '/api/admin/users', { token: admin });
    await app.request('GET', '/api/crm/customers', { token: admin });
    await app.request('GET', '/api/admin/settings', { token: admin });
    expect(await countAll()).toBe(total);
  });
});

describe('GET /api/admin/audit', () => {
  let actor: LoggedIn;
  const made: Array<{ id: string; at: string }> = [];
  let middle: string;

  beforeAll(async () => {
    actor = await createStaff(app, ['manage_users', 'view_audit'], admin);
    for (let i = 0; i < 5; i++) {
      if (i === 3) {
        await clockPast(made[made.length - 1]!.at);
        middle = new Date().toISOString();
        await clockPast(middle);
      }
      const res = await app.request('POST', '/api/admin/roles', {
        token: actor.token,
        body: { name: `f-${i}-${tag()}`, permissions: ['view_audit'] },
      });
      expect(res.status).toBe(201);
      made.push({ id: res.body.id, at: res.body.created_at });
    }
  });

  test('when filtered by actor_id, then only that actor’s rows come back, newest first', async () => {
    const res = await audit({ actor_id: actor.id, page_size: 200 });
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(5);
    expect(res.body.items.map((r: AuditRow) => r.entity_id)).toEqual(made.map((m) => m.id).reverse());
    expect(res.body.items.every((r: AuditRow) => r.actor_id === actor.id && r.action === 'role.created')).toBe(true);
  });

  test('when filtered by action, entity_type or entity_id, then every row matches and none that matches is missing', async () => {
    const all: AuditRow[] = (await audit({ page_size: 200 })).body.items;
    for (const [key, field, value] of [
      ['action', 'action', 'role.created'],
      ['entity_type', 'entity_type', 'role'],
      ['entity_id', 'entity_id', made[2]!.id],
      ['action', 'action', 'staff_user.created'],
    ] as const) {
      const res = await audit({ [key]: value, page_size: 200 });
      const expected = all.filter((r) => r[field] === value);
      expect(expected.length).toBeGreaterThan(0);
      expect({ key, ids: res.body.items.map((r: AuditRow) => r.id) }).toEqual({ key, ids: expected.map((r) => r.id) });
      expect(res.body.total).toBe(expected.length);
    }
    expect((await audit({ action: 'no.such.action' })).body).toEqual(expect.objectContaining({ items: [], total: 0 }));
  });

  test('when filtered by since and until, then since is inclusive, until exclusive, and they combine with other filters', async () => {
    const later = await audit({ actor_id: actor.id, since: middle });
    expect(later.body.items.map((r: AuditRow) => r.entity_id)).toEqual([made[4]!.id, made[3]!.id]);
    const earlier = await audit({ actor_id: actor.id, until: middle });
    expect(earlier.body.items.map((r: AuditRow) => r.entity_id)).toEqual([made[2]!.id, made[1]!.id, made[0]!.id]);

    const row = (await audit({ entity_id: made[1]!.id })).body.items[0] as AuditRow;
    expect(
      (await audit({ actor_id: actor.id, since: row.created_at, until: row.created_at.replace('Z', '+00:00') })).status,
    ).toBe(422);
    const exact = await audit({
      actor_id: actor.id,
      since: row.created_at,
      until: new Date(Date.parse(row.created_at) + 1).toISOString(),
    });
    expect(exact.body.items.map((r: AuditRow) => r.id)).toEqual([row.id]);
    // An offset other than Z means the same instant.
    const shifted = new Date(Date.parse(middle) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect((await audit({ actor_id: actor.id, since: shifted })).body.total).toBe(2);

    const bad = await audit({ since: 'yesterday', actor_id: 'me' });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual(
      expect.arrayContaining([
        ['query', 'since'],
        ['query', 'actor_id'],
      ]),
    );
  });

  test('when the trail is paged, then pages are disjoint, newest first throughout, and total counts every row', async () => {
    const all = await audit({ page_size: 200 });
    const total = all.body.total as number;
    expect(total).toBeGreaterThan(10);
    expect(all.body.items).toHaveLength(total);
    const times = all.body.items.map((r: AuditRow) => Date.parse(r.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);

    const pageSize = 3;
    const ids: string[] = [];
    for (let page = 1; page <= Math.ceil(total / pageSize); page++) {
      const res = await audit({ page, page_size: pageSize });
      expect(res.body).toEqual(expect.objectContaining({ page, page_size: pageSize, total }));
      ids.push(...res.body.items.map((r: AuditRow) => r.id));
    }
    expect(ids).toEqual(all.body.items.map((r: AuditRow) => r.id));
    expect((await audit()).body).toEqual(expect.objectContaining({ page: 1, page_size: 20 }));
    expect((await audit({ page_size: 201 })).status).toBe(422);
  });

  test('when the caller lacks view_audit, then 403; with it, 200', async () => {
    const without = await createStaff(app, ['manage_users', 'manage_customers', 'manage_settings', 'manage_api_tokens'], admin);
    const res = await audit({}, without.token);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect((await audit({}, actor.token)).status).toBe(200);
  });

  test('when the whole trail is read, then no password, password hash or token text is inside any before or after', async () => {
    const rows: AuditRow[] = (await audit({ page_size: 200 })).body.items;
    expect(rows.length).toBeGreaterThan(10);
    expect(secrets.length).toBeGreaterThan(4);
    const states = JSON.stringify(rows.map((r) => [r.before, r.after]));
    for (const secret of secrets) expect(states).not.toContain(secret);
    expect(states).not.toMatch(/argon2|password|token_hash|"token"/i);
    // The bootstrap row is there too, by the system.
    expect(rows).toContainEqual(
      expect.objectContaining({ actor_type: 'system', actor_id: null, action: 'staff_user.bootstrapped', entity_id: adminId }),
    );
  });
});
