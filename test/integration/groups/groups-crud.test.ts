import { adminToken, createCustomer } from '../../helpers/identity';
import { clockPast, startTestApp, type TestApp } from '../../helpers/test-app';
import {
  expectError,
  expectGroupShape,
  expectOneValidationError,
  expectStatus,
  sql,
  uniqueName,
  uniqueSymbol,
} from './groups-kit';

/** GET /groups, GET, PATCH and DELETE /groups/{id}. */

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'groupcrud', env: { ROLE: 'api' } });
  token = await adminToken(app);
});
afterAll(() => app?.stop());

const MISSING_ID = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';

async function createGroup(body: Record<string, unknown> = {}): Promise<any> {
  const res = await app.request('POST', '/groups', { token, body: { name: uniqueName(), ...body } });
  expectStatus(res, 201);
  return res.body;
}

const patch = (id: string, body: unknown) => app.request('PATCH', `/groups/${id}`, { token, body });
const get = (id: string) => app.request('GET', `/groups/${id}`, { token });

async function listAll(query = ''): Promise<any[]> {
  const items: any[] = [];
  for (let page = 1; ; page++) {
    const res = await app.request('GET', `/groups?page=${page}&page_size=100${query}`, { token });
    expectStatus(res, 200);
    items.push(...res.body.items);
    if (res.body.items.length < 100) return items;
  }
}

describe('GET /groups', () => {
  test('when groups exist, then the list is paged oldest first with page, page_size and total', async () => {
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await createGroup());
    const all = await listAll();
    const total = all.length;
    expect(total).toBeGreaterThanOrEqual(5);
    // The five just made are the newest, in the order they were made.
    expect(all.slice(-5).map((g) => g.id)).toEqual(made.map((g) => g.id));
    for (let i = 1; i < all.length; i++)
      expect(Date.parse(all[i].created_at)).toBeGreaterThanOrEqual(Date.parse(all[i - 1].created_at));
    for (const g of all) expectGroupShape(g);

    const pages: any[] = [];
    const pageCount = Math.ceil(total / 2);
    for (let page = 1; page <= pageCount; page++) {
      const res = await app.request('GET', `/groups?page=${page}&page_size=2`, { token });
      expectStatus(res, 200);
      expect(res.body).toEqual({ items: expect.any(Array), page, page_size: 2, total });
      expect(res.body.items.length).toBe(page < pageCount ? 2 : total - 2 * (pageCount - 1));
      pages.push(...res.body.items);
    }
    expect(pages.map((g) => g.id)).toEqual(all.map((g) => g.id));

    const beyond = await app.request('GET', `/groups?page=${pageCount + 1}&page_size=2`, { token });
    expect(beyond.body).toEqual({ items: [], page: pageCount + 1, page_size: 2, total });
  });

  test('when no paging is asked, then page 1 of 20 is answered', async () => {
    const res = await app.request('GET', '/groups', { token });
    expectStatus(res, 200);
    expect(res.body).toMatchObject({ page: 1, page_size: 20 });
    expect(res.body.items.length).toBe(Math.min(20, res.body.total));
  });

  test('when is_active=true or false is asked, then only active or only inactive groups are listed', async () => {
    const active = await createGroup();
    const inactive = (await app.request('POST', `/groups/${active.id}/clone`, { token })).body;
    expect(inactive.is_active).toBe(false);
    const onlyActive = await listAll('&is_active=true');
    const onlyInactive = await listAll('&is_active=false');
    const everything = await listAll();
    expect(onlyActive.every((g) => g.is_active === true)).toBe(true);
    expect(onlyInactive.every((g) => g.is_active === false)).toBe(true);
    expect(onlyActive.map((g) => g.id)).toContain(active.id);
    expect(onlyActive.map((g) => g.id)).not.toContain(inactive.id);
    expect(onlyInactive.map((g) => g.id)).toContain(inactive.id);
    expect(onlyActive.length + onlyInactive.length).toBe(everything.length);
    const totalInactive = (await app.request('GET', '/groups?is_active=false&page_size=1', { token })).body.total;
    expect(totalInactive).toBe(onlyInactive.length);
  });

  test.each([
    ['is_active=maybe', 'is_active', 'bool_parsing'],
    ['is_active=', 'is_active', 'bool_parsing'],
    ['page=0', 'page', 'greater_than_equal'],
    ['page=x', 'page', null],
    ['page_size=0', 'page_size', 'greater_than_equal'],
    ['page_size=201', 'page_size', 'less_than_equal'],
  ])('when the query is %s, then 422 at [query, %s]', async (query, field, type) => {
    const res = await app.request('GET', `/groups?${query}`, { token });
    expectStatus(res, 422);
    expect(res.body.detail).toHaveLength(1);
    expect(res.body.detail[0].loc).toEqual(['query', field]);
    if (type) expect(res.body.detail[0].type).toBe(type);
  });
});

describe('GET /groups/{id}', () => {
  test('when the group exists, then 200 with the group as created', async () => {
    const g = await createGroup({ description: 'd', default_leverage: 30 });
    const res = await get(g.id);
    expectStatus(res, 200);
    expect(res.body).toEqual(g);
  });

  test('when it does not exist, then 404 NOT_FOUND; when the id is not a uuid, then 422 uuid_parsing', async () => {
    expectError(await get(MISSING_ID), 404, 'NOT_FOUND');
    expectOneValidationError(await get('nope'), ['path', 'group_id'], 'uuid_parsing');
  });
});

/** The same bounds as creation (the Group table), for PATCH. */
const PATCH_REJECTED: Array<[field: string, value: unknown, type: string]> = [
  ['name', '', 'string_too_short'],
  ['name', 'n'.repeat(65), 'string_too_long'],
  ['name', null, 'string_type'],
  ['name', 5, 'string_type'],
  ['description', 5, 'string_type'],
  ['currency', 'eur', 'string_pattern_mismatch'],
  ['currency', null, 'string_type'],
  ['default_leverage', 0, 'greater_than_equal'],
  ['default_leverage', 1001, 'less_than_equal'],
  ['default_leverage', 1.5, 'int_type'],
  ['default_leverage', '10', 'int_type'],
  ['default_leverage', null, 'int_type'],
  ['margin_call_level', 19.99, 'greater_than_equal'],
  ['margin_call_level', 500.01, 'less_than_equal'],
  ['margin_call_level', '50', 'float_type'],
  ['margin_call_level', 100.00001, 'decimal_max_places'],
  ['max_exposure', 10.005, 'decimal_max_places'],
  ['stopout_level', 4.99, 'greater_than_equal'],
  ['stopout_level', 80.01, 'less_than_equal'],
  ['commission_type', 'flat', 'literal_error'],
  ['commission_type', null, 'literal_error'],
  ['commission_value', -0.01, 'greater_than_equal'],
  ['commission_value', 50.01, 'less_than_equal'],
  ['swap_enabled', 'yes', 'bool_type'],
  ['swap_multiplier', 0.0099, 'greater_than_equal'],
  ['swap_multiplier', 10.01, 'less_than_equal'],
  ['swap_free', 'yes', 'bool_type'],
  ['swap_free_days', -1, 'greater_than_equal'],
  ['swap_free_days', 366, 'less_than_equal'],
  ['swap_free_days', 1.5, 'int_type'],
  ['is_islamic', 'yes', 'bool_type'],
  ['max_exposure', -0.01, 'greater_than_equal'],
  ['max_exposure', 'lots', 'float_type'],
  ['net_max_exposure', 'yes', 'bool_type'],
  ['is_active', 'yes', 'bool_type'],
  ['is_active', null, 'bool_type'],
  ['is_default', 'yes', 'bool_type'],
];

const PATCH_ACCEPTED: Array<[field: string, value: unknown]> = [
  ['name', 'p'],
  ['default_leverage', 1],
  ['default_leverage', 1000],
  ['margin_call_level', 20],
  ['margin_call_level', 500],
  ['stopout_level', 5],
  ['stopout_level', 80],
  ['commission_value', 0],
  ['commission_value', 50],
  ['commission_type', 'per_deal'],
  ['swap_multiplier', 0.01],
  ['swap_multiplier', 10],
  ['swap_free_days', 0],
  ['swap_free_days', 365],
  ['max_exposure', 0],
  ['currency', 'CHF'],
  ['swap_enabled', false],
  ['swap_free', true],
  ['is_islamic', true],
  ['net_max_exposure', true],
  ['max_open_positions', 10],
  ['max_open_positions', null],
];

describe('PATCH /groups/{id}', () => {
  let target: any;
  beforeAll(async () => {
    target = await createGroup({ name: uniqueName('Patch') });
  });

  test.each(PATCH_REJECTED)(
    'when %s is %j, then 422 with exactly loc [body, field] and type %s, and nothing changes',
    async (field, value, type) => {
      const before = (await get(target.id)).body;
      expectOneValidationError(await patch(target.id, { [field]: value }), ['body', field], type);
      expect((await get(target.id)).body).toEqual(before);
    },
  );

  test.each(PATCH_ACCEPTED)('when %s is %j, then 200 and the group has that value', async (field, value) => {
    const g = await createGroup();
    const body = field === 'name' ? { name: uniqueName('p') } : { [field]: value };
    const res = await patch(g.id, body);
    expectStatus(res, 200);
    expect(res.body).toMatchObject(body);
    expect((await get(g.id)).body).toMatchObject(body);
  });

  test('when one field is sent, then only that field changes (and updated_at moves on)', async () => {
    const g = await createGroup({
      description: 'keep me',
      currency: 'EUR',
      default_leverage: 50,
      margin_call_level: 80,
      stopout_level: 40,
      commission_type: 'per_lot',
      commission_value: 5,
      swap_enabled: false,
      swap_multiplier: 2,
      swap_free: true,
      swap_free_days: 3,
      is_islamic: true,
      max_exposure: 1000,
      net_max_exposure: true,
    });
    await clockPast(g.updated_at);
    const res = await patch(g.id, { default_leverage: 200 });
    expectStatus(res, 200);
    const { updated_at: before, ...restBefore } = g;
    const { updated_at: after, ...restAfter } = res.body;
    expect(restAfter).toEqual({ ...restBefore, default_leverage: 200 });
    expect(Date.parse(after)).toBeGreaterThan(Date.parse(before));
    expect(res.body.created_at).toBe(g.created_at);
    expect((await get(g.id)).body).toEqual(res.body);
  });

  test('when an empty body is sent, then 200 and no term changes', async () => {
    const g = await createGroup({ description: 'x', max_exposure: 5 });
    const res = await patch(g.id, {});
    expectStatus(res, 200);
    const { updated_at: _a, ...restBefore } = g;
    const { updated_at: _b, ...restAfter } = res.body;
    expect(restAfter).toEqual(restBefore);
  });

  test('when description and max_exposure are null, then both are cleared', async () => {
    const g = await createGroup({ description: 'to clear', max_exposure: 12345.67 });
    const res = await patch(g.id, { description: null, max_exposure: null });
    expectStatus(res, 200);
    expect(res.body).toMatchObject({ description: null, max_exposure: null });
    const row = await sql(app, 'select description, max_exposure from trading_groups where id = ?', [g.id]);
    expect(row).toEqual([{ description: null, max_exposure: null }]);
  });

  test('when fields are omitted, then description and max_exposure are kept (omitted is not null)', async () => {
    const g = await createGroup({ description: 'stay', max_exposure: 10 });
    const res = await patch(g.id, { stopout_level: 50 });
    expect(res.body).toMatchObject({ description: 'stay', max_exposure: 10, stopout_level: 50 });
  });

  test('when the new name is taken in another case, then 409 NAME_TAKEN and nothing changes', async () => {
    const a = await createGroup();
    const b = await createGroup({ default_leverage: 7 });
    const res = await patch(b.id, { name: a.name.toUpperCase(), default_leverage: 8 });
    expectError(res, 409, 'NAME_TAKEN');
    expect((await get(b.id)).body).toEqual(b);
  });

  test('when a group is renamed to its own name in another case, then 200', async () => {
    const g = await createGroup();
    const res = await patch(g.id, { name: g.name.toUpperCase() });
    expectStatus(res, 200);
    expect(res.body.name).toBe(g.name.toUpperCase());
  });

  test('when two groups are renamed to one name at the same moment, then exactly one succeeds', async () => {
    const [a, b] = [await createGroup(), await createGroup()];
    const name = uniqueName('Same');
    const answers = await Promise.all([patch(a.id, { name }), patch(b.id, { name: name.toLowerCase() })]);
    expect(answers.map((x) => x.status).sort()).toEqual([200, 409]);
    expect(answers.find((x) => x.status === 409)!.body.code).toBe('NAME_TAKEN');
  });

  test('when is_active true is sent for a clone, then the clone is active', async () => {
    const g = await createGroup();
    const copy = (await app.request('POST', `/groups/${g.id}/clone`, { token })).body;
    const res = await patch(copy.id, { is_active: true });
    expectStatus(res, 200);
    expect(res.body.is_active).toBe(true);
    expect((await get(copy.id)).body.is_active).toBe(true);
    // And back again.
    expect((await patch(copy.id, { is_active: false })).body.is_active).toBe(false);
  });

  test('when is_default true is sent, then that group is the only default', async () => {
    const [a, b] = [await createGroup(), await createGroup()];
    expect((await patch(a.id, { is_default: true })).body.is_default).toBe(true);
    expect((await patch(b.id, { is_default: true })).body.is_default).toBe(true);
    expect((await get(a.id)).body.is_default).toBe(false);
    const defaults = (await listAll()).filter((g) => g.is_default);
    expect(defaults.map((g) => g.id)).toEqual([b.id]);
    // Setting it again on the default keeps it the one default.
    expect((await patch(b.id, { is_default: true })).body.is_default).toBe(true);
    expect((await listAll()).filter((g) => g.is_default).map((g) => g.id)).toEqual([b.id]);
  });

  test('when is_default false is sent for the default, then no group is default', async () => {
    const g = await createGroup();
    await patch(g.id, { is_default: true });
    expect((await patch(g.id, { is_default: false })).body.is_default).toBe(false);
    expect((await listAll()).filter((x) => x.is_default)).toEqual([]);
  });

  test('when making a group default fails (name taken, unknown group), then the old default stays the default', async () => {
    const [a, b] = [await createGroup(), await createGroup()];
    expectStatus(await patch(a.id, { is_default: true }), 200);
    expectError(await patch(b.id, { is_default: true, name: a.name.toLowerCase() }), 409, 'NAME_TAKEN');
    expectError(await patch(MISSING_ID, { is_default: true }), 404, 'NOT_FOUND');
    expect((await get(a.id)).body.is_default).toBe(true);
    expect((await get(b.id)).body.is_default).toBe(false);
    expect(await sql(app, 'select id from trading_groups where is_default')).toEqual([{ id: a.id }]);
  });

  test('when several groups are made default at the same moment, then every request succeeds and exactly one group is default', async () => {
    const groups = [];
    for (let i = 0; i < 4; i++) groups.push(await createGroup());
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all(groups.map((g) => patch(g.id, { is_default: true })));
      for (const a of answers) expectStatus(a, 200);
      const defaults = await sql(app, 'select id from trading_groups where is_default');
      expect(defaults).toHaveLength(1);
    }
  });

  test('when the group does not exist, then 404; when the id is not a uuid, then 422', async () => {
    expectError(await patch(MISSING_ID, { default_leverage: 5 }), 404, 'NOT_FOUND');
    expectOneValidationError(await patch('x', { default_leverage: 5 }), ['path', 'group_id'], 'uuid_parsing');
  });
});

describe('DELETE /groups/{id}', () => {
  test('when an unused group is deleted, then 204, and then GET and DELETE are 404', async () => {
    const g = await createGroup();
    const res = await app.request('DELETE', `/groups/${g.id}`, { token });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectError(await get(g.id), 404, 'NOT_FOUND');
    expectError(await app.request('DELETE', `/groups/${g.id}`, { token }), 404, 'NOT_FOUND');
    expect((await listAll()).map((x) => x.id)).not.toContain(g.id);
  });

  test('when a group with instrument rows is deleted, then its rows go with it', async () => {
    const g = await createGroup();
    const symbol = uniqueSymbol('D');
    const inst = await app.request('POST', '/api/platform/instruments', {
      token,
      body: { symbol, digits: 2, contract_size: 1, base_currency: 'XAU', quote_currency: 'USD' },
    });
    expectStatus(inst, 201);
    const put = await app.request('PUT', `/groups/${g.id}/instruments/${symbol}`, {
      token,
      body: { enabled: true, spread: 1, swap_long: 0, swap_short: 0 },
    });
    expectStatus(put, 201);
    expect(await app.request('DELETE', `/groups/${g.id}`, { token })).toMatchObject({ status: 204 });
    expect(await sql(app, 'select 1 from group_instruments where group_id = ?', [g.id])).toEqual([]);
    expectError(await app.request('GET', `/groups/${g.id}/instruments`, { token }), 404, 'NOT_FOUND');
    // The instrument itself stays.
    const list = await app.request('GET', '/api/platform/instruments', { token });
    expect(list.body.items.map((i: any) => i.symbol)).toContain(symbol);
  });

  test('when an account uses the group, then 409 GROUP_IN_USE and the group stays; once it is gone, then 204', async () => {
    const g = await createGroup();
    const customer = await createCustomer(app, token);
    const [account] = await sql<{ id: string }>(
      app,
      `insert into accounts (id, created_at, updated_at, customer_id, kind, group_id, currency, balance, reserved)
       values (gen_random_uuid(), now(), now(), ?, 'live', ?, 'USD', 0, 0) returning id`,
      [customer.id, g.id],
    );
    expectError(await app.request('DELETE', `/groups/${g.id}`, { token }), 409, 'GROUP_IN_USE');
    expect((await get(g.id)).body).toEqual(g);
    await sql(app, 'delete from accounts where id = ?', [account.id]);
    expect((await app.request('DELETE', `/groups/${g.id}`, { token })).status).toBe(204);
  });

  test('when the group does not exist, then 404; when the id is not a uuid, then 422', async () => {
    expectError(await app.request('DELETE', `/groups/${MISSING_ID}`, { token }), 404, 'NOT_FOUND');
    expectOneValidationError(await app.request('DELETE', '/groups/zzz', { token }), ['path', 'group_id'], 'uuid_parsing');
  });

  test('when a deleted group name is used again, then 201 (the name is free)', async () => {
    const g = await createGroup();
    expect((await app.request('DELETE', `/groups/${g.id}`, { token })).status).toBe(204);
    const again = await app.request('POST', '/groups', { token, body: { name: g.name.toUpperCase() } });
    expectStatus(again, 201);
  });
});
