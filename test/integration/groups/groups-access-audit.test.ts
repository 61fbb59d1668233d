import type { Permission } from '../../../src/domain/identity/permissions';
import { adminToken, createCustomer, createStaff, type LoggedIn } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { auditOf, expectError, expectStatus, uniqueName, uniqueSymbol } from './groups-kit';

/**
 * Who may call the group, instrument and simulator routes (view_groups, manage_groups,
 * manage_simulator; customers never), and the audit row every change leaves.
 */

let app: TestApp;
let admin: string;
let viewer: LoggedIn;
let manager: LoggedIn;
let simulator: LoggedIn;
let customer: LoggedIn;
let groupId: string;
let symbol: string;

beforeAll(async () => {
  app = await startTestApp({ label: 'groupaccess', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  viewer = await createStaff(app, ['view_groups'], admin);
  manager = await createStaff(app, ['manage_groups'], admin);
  simulator = await createStaff(app, ['manage_simulator'], admin);
  customer = await createCustomer(app, admin);
  const g = await app.request('POST', '/groups', { token: admin, body: { name: uniqueName('Access') } });
  expectStatus(g, 201);
  groupId = g.body.id;
  symbol = uniqueSymbol('A');
  const i = await app.request('POST', '/api/platform/instruments', {
    token: admin,
    body: { symbol, digits: 5, contract_size: 100_000, base_currency: 'EUR', quote_currency: 'USD' },
  });
  expectStatus(i, 201);
  const row = { enabled: true, spread: 1, swap_long: 0, swap_short: 0 };
  expectStatus(await app.request('PUT', `/groups/${groupId}/instruments/${symbol}`, { token: admin, body: row }), 201);
});
afterAll(() => app?.stop());

type Call = { method: string; path: () => string; body?: () => unknown; permission: Permission };

const ROW = { enabled: true, spread: 2, swap_long: 0, swap_short: 0 };
const CALLS: Record<string, Call> = {
  'GET /groups': { method: 'GET', path: () => '/groups', permission: 'view_groups' },
  'GET /groups/{id}': { method: 'GET', path: () => `/groups/${groupId}`, permission: 'view_groups' },
  'GET /groups/{id}/instruments': { method: 'GET', path: () => `/groups/${groupId}/instruments`, permission: 'view_groups' },
  'GET /api/platform/instruments': { method: 'GET', path: () => '/api/platform/instruments', permission: 'view_groups' },
  'POST /groups': { method: 'POST', path: () => '/groups', body: () => ({ name: uniqueName('P') }), permission: 'manage_groups' },
  'PATCH /groups/{id}': { method: 'PATCH', path: () => `/groups/${groupId}`, body: () => ({}), permission: 'manage_groups' },
  'POST /groups/{id}/clone': { method: 'POST', path: () => `/groups/${groupId}/clone`, permission: 'manage_groups' },
  'DELETE /groups/{id}': {
    method: 'DELETE',
    path: () => '/groups/6a0d5f4e-2b1c-4a3d-9e8f-7a6b5c4d3e2f',
    permission: 'manage_groups',
  },
  'PUT /groups/{id}/instruments/{symbol}': {
    method: 'PUT',
    path: () => `/groups/${groupId}/instruments/${symbol}`,
    body: () => ROW,
    permission: 'manage_groups',
  },
  'DELETE /groups/{id}/instruments/{symbol}': {
    method: 'DELETE',
    path: () => `/groups/${groupId}/instruments/NOSUCH`,
    permission: 'manage_groups',
  },
  'POST /api/platform/instruments': {
    method: 'POST',
    path: () => '/api/platform/instruments',
    body: () => ({ symbol: uniqueSymbol('P'), digits: 2, contract_size: 1, base_currency: 'USD', quote_currency: 'JPY' }),
    permission: 'manage_groups',
  },
  'POST /simulator/quotes': {
    method: 'POST',
    path: () => '/simulator/quotes',
    body: () => ({ symbol, bid: 1.1, ask: 1.2 }),
    permission: 'manage_simulator',
  },
  'GET /simulator/quotes': { method: 'GET', path: () => '/simulator/quotes', permission: 'manage_simulator' },
  'DELETE /simulator/quotes/{symbol}': {
    method: 'DELETE',
    path: () => '/simulator/quotes/NOQUOTE',
    permission: 'manage_simulator',
  },
  'GET /simulator/random-walk': { method: 'GET', path: () => '/simulator/random-walk', permission: 'manage_simulator' },
  'PUT /simulator/random-walk': {
    method: 'PUT',
    path: () => '/simulator/random-walk',
    body: () => ({ enabled: false }),
    permission: 'manage_simulator',
  },
};

const send = (call: Call, token?: string) =>
  app.request(call.method, call.path(), { token, ...(call.body ? { body: call.body() } : {}) });

const users = (): Record<string, LoggedIn> => ({ view_groups: viewer, manage_groups: manager, manage_simulator: simulator });

describe('permissions', () => {
  test.each(Object.keys(CALLS))(
    'when %s is called by each kind of caller, then only its permission gets through',
    async (name) => {
      const call = CALLS[name];
      for (const [permission, user] of Object.entries(users())) {
        const res = await send(call, user.token);
        if (permission === call.permission) {
          // Through the guard: whatever the route answers, it is not 401/403.
          expect([name, permission, res.status < 400 || res.status === 404]).toEqual([name, permission, true]);
        } else {
          expect([name, permission, res.status]).toEqual([name, permission, 403]);
          expect(res.body.code).toBe('FORBIDDEN');
        }
      }
      // Customers never; no token is 401.
      expectError(await send(call, customer.token), 403, 'FORBIDDEN');
      const anonymous = await send(call);
      expectError(anonymous, 401, 'UNAUTHENTICATED');
      expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
    },
  );

  test('when a view_groups user posts a group, then 403 and no group is created', async () => {
    const name = uniqueName('Viewer');
    expectError(await app.request('POST', '/groups', { token: viewer.token, body: { name } }), 403, 'FORBIDDEN');
    const list = await app.request('GET', '/groups?page_size=100', { token: viewer.token });
    expect(list.body.items.map((g: any) => g.name)).not.toContain(name);
  });

  test('when a caller without the permission sends an invalid body, then 403, not 422 (no schema is revealed)', async () => {
    const res = await app.request('POST', '/groups', { token: viewer.token, body: { default_leverage: 0 } });
    expectError(res, 403, 'FORBIDDEN');
  });

  test('when an API token scoped to view_groups is used, then it reads groups but cannot create one', async () => {
    const issued = await app.request('POST', '/api/crm/settings/api-tokens', {
      token: admin,
      body: { name: 'groups reader', scopes: ['view_groups'] },
    });
    expectStatus(issued, 201);
    expectStatus(await app.request('GET', '/groups', { token: issued.body.token }), 200);
    expectError(
      await app.request('POST', '/groups', { token: issued.body.token, body: { name: uniqueName() } }),
      403,
      'FORBIDDEN',
    );
  });

  test('when an API token scoped to manage_groups creates a group, then the audit row names the token', async () => {
    const issued = await app.request('POST', '/api/crm/settings/api-tokens', {
      token: admin,
      body: { name: 'groups writer', scopes: ['manage_groups'] },
    });
    expectStatus(issued, 201);
    const res = await app.request('POST', '/groups', { token: issued.body.token, body: { name: uniqueName('Tok') } });
    expectStatus(res, 201);
    const [entry] = await auditOf(app, admin, { entity_type: 'group', entity_id: res.body.id });
    expect(entry).toMatchObject({ action: 'group.created', actor_type: 'api_token', api_token_id: issued.body.id });
  });
});

describe('audit', () => {
  test('when a group is created, changed, cloned and deleted, then each change has its audit row with who, before and after', async () => {
    const token = manager.token;
    const created = await app.request('POST', '/groups', { token, body: { name: uniqueName('Audit'), default_leverage: 10 } });
    expectStatus(created, 201);
    const id = created.body.id;
    const patched = await app.request('PATCH', `/groups/${id}`, { token, body: { default_leverage: 20 } });
    expectStatus(patched, 200);
    const cloned = await app.request('POST', `/groups/${id}/clone`, { token });
    expectStatus(cloned, 201);
    expect((await app.request('DELETE', `/groups/${id}`, { token })).status).toBe(204);

    const entries = await auditOf(app, admin, { entity_type: 'group', entity_id: id });
    expect(entries.map((e) => e.action)).toEqual(['group.created', 'group.updated', 'group.deleted']);
    for (const e of entries)
      expect(e).toMatchObject({ actor_type: 'user', actor_id: manager.id, entity_type: 'group', entity_id: id });
    const [c, u, d] = entries;
    expect(c.before).toBeNull();
    expect(c.after).toMatchObject({ id, name: created.body.name, default_leverage: 10 });
    expect(u.before).toMatchObject({ default_leverage: 10 });
    expect(u.after).toMatchObject({ default_leverage: 20 });
    expect(d.before).toMatchObject({ id, default_leverage: 20 });
    expect(d.after).toBeNull();
    for (const e of entries) expect(e.request_id).toEqual(expect.any(String));

    const [clone] = await auditOf(app, admin, { entity_type: 'group', entity_id: cloned.body.id });
    expect(clone).toMatchObject({
      action: 'group.cloned',
      actor_id: manager.id,
      before: { source_id: id },
      after: { id: cloned.body.id, name: cloned.body.name, is_active: false },
    });
  });

  test('when a request fails (422, 409, 404), then no audit row is written', async () => {
    const before = (await app.request('GET', '/api/admin/audit?page_size=1', { token: admin })).body.total;
    const name = uniqueName('Fail');
    expectStatus(await app.request('POST', '/groups', { token: manager.token, body: { name } }), 201);
    const afterCreate = (await app.request('GET', '/api/admin/audit?page_size=1', { token: admin })).body.total;
    expect(afterCreate).toBe(before + 1);
    expectStatus(await app.request('POST', '/groups', { token: manager.token, body: { name: name.toUpperCase() } }), 409);
    expectStatus(await app.request('POST', '/groups', { token: manager.token, body: { name: '' } }), 422);
    expectStatus(await app.request('PATCH', `/groups/${groupId}`, { token: manager.token, body: { stopout_level: 1 } }), 422);
    expectStatus(await app.request('DELETE', '/groups/6a0d5f4e-2b1c-4a3d-9e8f-7a6b5c4d3e2f', { token: manager.token }), 404);
    expect((await app.request('GET', '/api/admin/audit?page_size=1', { token: admin })).body.total).toBe(afterCreate);
  });

  test('when a PATCH name clashes, then neither the change nor its audit row is kept', async () => {
    const a = await app.request('POST', '/groups', { token: admin, body: { name: uniqueName('Clash') } });
    const b = await app.request('POST', '/groups', { token: admin, body: { name: uniqueName('Clash') } });
    expectStatus(await app.request('PATCH', `/groups/${b.body.id}`, { token: admin, body: { name: a.body.name } }), 409);
    const entries = await auditOf(app, admin, { entity_type: 'group', entity_id: b.body.id });
    expect(entries.map((e) => e.action)).toEqual(['group.created']);
  });

  test('when an instrument is created and rows are put and deleted, then instrument.created and group_instrument.* rows are written', async () => {
    const sym = uniqueSymbol('AU');
    const inst = await app.request('POST', '/api/platform/instruments', {
      token: manager.token,
      body: { symbol: sym, digits: 3, contract_size: 1000, base_currency: 'USD', quote_currency: 'JPY' },
    });
    expectStatus(inst, 201);
    const [created] = await auditOf(app, admin, { entity_type: 'instrument', entity_id: inst.body.id });
    expect(created).toMatchObject({
      action: 'instrument.created',
      actor_id: manager.id,
      after: { symbol: sym, digits: 3, contract_size: 1000 },
    });

    const g = await app.request('POST', '/groups', { token: admin, body: { name: uniqueName('Rows') } });
    const path = `/groups/${g.body.id}/instruments/${sym}`;
    expectStatus(await app.request('PUT', path, { token: manager.token, body: ROW }), 201);
    expectStatus(await app.request('PUT', path, { token: manager.token, body: { ...ROW, spread: 5 } }), 200);
    expect((await app.request('DELETE', path, { token: manager.token })).status).toBe(204);
    const rows = (await auditOf(app, admin, { entity_type: 'group', entity_id: g.body.id })).filter((e) =>
      e.action.startsWith('group_instrument.'),
    );
    expect(rows.map((e) => e.action)).toEqual([
      'group_instrument.created',
      'group_instrument.updated',
      'group_instrument.deleted',
    ]);
    expect(rows[0]).toMatchObject({ before: null, after: { symbol: sym, spread: 2 } });
    expect(rows[1]).toMatchObject({ before: { spread: 2 }, after: { spread: 5 } });
    expect(rows[2]).toMatchObject({ before: { symbol: sym, spread: 5 }, after: null });
    for (const e of rows) expect(e.actor_id).toBe(manager.id);
  });

  test('when a quote is set and removed and the walk is switched, then quote.set, quote.deleted and random_walk.updated rows are written', async () => {
    const res = await app.request('POST', '/simulator/quotes', {
      token: simulator.token,
      body: { symbol, bid: 1.2, ask: 1.20011 },
    });
    expectStatus(res, 200);
    const quoteEntries = await auditOf(app, admin, { entity_type: 'instrument', entity_id: symbol });
    const set = quoteEntries.filter((e) => e.action === 'quote.set').pop();
    expect(set).toMatchObject({ actor_id: simulator.id, after: { symbol, bid: 1.2, ask: 1.20011 } });

    expect((await app.request('DELETE', `/simulator/quotes/${symbol}`, { token: simulator.token })).status).toBe(204);
    const deleted = (await auditOf(app, admin, { entity_type: 'instrument', entity_id: symbol })).pop();
    expect(deleted).toMatchObject({ action: 'quote.deleted', actor_id: simulator.id });

    const off = await app.request('PUT', '/simulator/random-walk', { token: simulator.token, body: { enabled: false } });
    expectStatus(off, 200);
    const walk = (await auditOf(app, admin, { entity_type: 'simulator' })).pop();
    expect(walk).toMatchObject({ action: 'random_walk.updated', actor_id: simulator.id, after: { enabled: false } });
  });

  test('when a rejected quote is sent, then no quote.set row is written', async () => {
    const before = (await auditOf(app, admin, { action: 'quote.set' })).length;
    expectStatus(
      await app.request('POST', '/simulator/quotes', { token: simulator.token, body: { symbol, bid: 2, ask: 1 } }),
      422,
    );
    expect((await auditOf(app, admin, { action: 'quote.set' })).length).toBe(before);
  });
});
