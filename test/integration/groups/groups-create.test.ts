import { adminToken } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectError, expectGroupShape, expectOneValidationError, expectStatus, sql, uniqueName, UUID } from './groups-kit';

/** POST /groups (endpoint 6): the Group table's bounds, types and defaults, and unique names. */

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'groupcreate', env: { ROLE: 'api' } });
  token = await adminToken(app);
});
afterAll(() => app?.stop());

const create = (body: Record<string, unknown>) => app.request('POST', '/groups', { token, body });

/** Every bound of the Group table: the value just outside, at, and (for the accepted side) inside it. */
const REJECTED: Array<[field: string, value: unknown, type: string]> = [
  ['default_leverage', 0, 'greater_than_equal'],
  ['default_leverage', -1, 'greater_than_equal'],
  ['default_leverage', 1001, 'less_than_equal'],
  ['margin_call_level', 19.99, 'greater_than_equal'],
  ['margin_call_level', 500.01, 'less_than_equal'],
  ['stopout_level', 4.99, 'greater_than_equal'],
  ['stopout_level', 80.01, 'less_than_equal'],
  ['commission_value', -0.01, 'greater_than_equal'],
  ['commission_value', 50.01, 'less_than_equal'],
  ['swap_multiplier', 0.0099, 'greater_than_equal'],
  ['swap_multiplier', 0, 'greater_than_equal'],
  ['swap_multiplier', 10.01, 'less_than_equal'],
  ['swap_free_days', -1, 'greater_than_equal'],
  ['swap_free_days', 366, 'less_than_equal'],
  ['max_exposure', -0.01, 'greater_than_equal'],
  ['name', '', 'string_too_short'],
  ['name', 'n'.repeat(65), 'string_too_long'],
  // Wrong types.
  ['default_leverage', '100', 'int_type'],
  ['default_leverage', 'abc', 'int_type'],
  ['default_leverage', 1.5, 'int_type'],
  ['default_leverage', true, 'int_type'],
  ['swap_free_days', '5', 'int_type'],
  ['swap_free_days', 2.5, 'int_type'],
  ['margin_call_level', '100', 'float_type'],
  ['stopout_level', 'high', 'float_type'],
  ['commission_value', '1', 'float_type'],
  ['swap_multiplier', false, 'float_type'],
  ['max_exposure', '1000', 'float_type'],
  ['swap_enabled', 'yes', 'bool_type'],
  ['swap_free', 'yes', 'bool_type'],
  ['is_islamic', 'yes', 'bool_type'],
  ['net_max_exposure', 'yes', 'bool_type'],
  ['swap_enabled', 1, 'bool_type'],
  ['name', 5, 'string_type'],
  ['name', null, 'string_type'],
  ['name', ['a'], 'string_type'],
  ['description', 5, 'string_type'],
  ['currency', 840, 'string_type'],
  ['currency', null, 'string_type'],
  ['default_leverage', null, 'int_type'],
  ['margin_call_level', null, 'float_type'],
  ['swap_enabled', null, 'bool_type'],
  // More decimals than the column keeps (scale 4; max_exposure 2) would be stored rounded.
  ['margin_call_level', 100.12345, 'decimal_max_places'],
  ['stopout_level', 20.00001, 'decimal_max_places'],
  ['commission_value', 0.00001, 'decimal_max_places'],
  ['swap_multiplier', 1.00001, 'decimal_max_places'],
  ['max_exposure', 0.001, 'decimal_max_places'],
  // commission_type is one of four words; currency is three capital letters.
  ['commission_type', 'flat', 'literal_error'],
  ['commission_type', 'NONE', 'literal_error'],
  ['commission_type', '', 'literal_error'],
  ['commission_type', 1, 'literal_error'],
  ['currency', 'usd', 'string_pattern_mismatch'],
  ['currency', 'US', 'string_pattern_mismatch'],
  ['currency', 'USDT', 'string_pattern_mismatch'],
  ['currency', 'U5D', 'string_pattern_mismatch'],
  ['currency', '', 'string_pattern_mismatch'],
  ['currency', ' USD', 'string_pattern_mismatch'],
];

const ACCEPTED: Array<[field: string, value: unknown]> = [
  ['default_leverage', 1],
  ['default_leverage', 2],
  ['default_leverage', 999],
  ['default_leverage', 1000],
  ['margin_call_level', 20],
  ['margin_call_level', 20.01],
  ['margin_call_level', 499.99],
  ['margin_call_level', 500],
  ['stopout_level', 5],
  ['stopout_level', 5.01],
  ['stopout_level', 79.99],
  ['stopout_level', 80],
  ['commission_value', 0],
  ['commission_value', 0.01],
  ['commission_value', 49.99],
  ['commission_value', 50],
  ['swap_multiplier', 0.01],
  ['swap_multiplier', 0.02],
  ['swap_multiplier', 9.99],
  ['swap_multiplier', 10],
  ['swap_free_days', 0],
  ['swap_free_days', 1],
  ['swap_free_days', 364],
  ['swap_free_days', 365],
  ['margin_call_level', 100.1234],
  ['commission_value', 0.0001],
  ['swap_multiplier', 0.0101],
  ['max_exposure', 0],
  ['max_exposure', 0.01],
  ['max_exposure', 1_000_000_000],
  ['max_exposure', 123_456_789_012.34],
  ['max_exposure', null],
  ['commission_type', 'none'],
  ['commission_type', 'per_lot'],
  ['commission_type', 'per_deal'],
  ['commission_type', 'percent'],
  ['currency', 'EUR'],
  ['currency', 'JPY'],
  ['description', 'Retail clients'],
  ['description', null],
  ['description', ''],
  ['swap_enabled', false],
  ['swap_free', true],
  ['is_islamic', true],
  ['net_max_exposure', true],
];

describe('POST /groups bounds and types', () => {
  test.each(REJECTED)('when %s is %j, then 422 with exactly loc [body, field] and type %s', async (field, value, type) => {
    const res = await create({ name: uniqueName(), [field]: value });
    expectOneValidationError(res, ['body', field], type);
  });

  test.each(ACCEPTED)('when %s is %j, then 201 and the group keeps exactly that value', async (field, value) => {
    const res = await create({ name: uniqueName(), [field]: value });
    expectStatus(res, 201);
    expect(res.body[field]).toEqual(value);
    // What was stored, not just what was echoed.
    const got = await app.request('GET', `/groups/${res.body.id}`, { token });
    expect(got.body[field]).toEqual(value);
  });

  test.each([
    ['one character', 'a'],
    ['64 characters', 'n'.repeat(60) + 'abcd'],
    ['63 characters', 'm'.repeat(63)],
    ['inner spaces and symbols', 'VIP / Pro-1 (EUR) 50%_off'],
  ])('when the name has %s, then 201 with the name unchanged', async (_what, name) => {
    const res = await create({ name });
    expectStatus(res, 201);
    expect(res.body.name).toBe(name);
  });

  test('when the name is missing, then 422 missing at [body, name]', async () => {
    expectOneValidationError(await create({ currency: 'USD' }), ['body', 'name'], 'missing');
  });

  test('when the body is empty, then 422 missing at [body, name] only (every other field has a default)', async () => {
    expectOneValidationError(await create({}), ['body', 'name'], 'missing');
  });

  test('when several fields are wrong, then every one is reported', async () => {
    const res = await create({ default_leverage: 0, stopout_level: 81, currency: 'eur' });
    expectStatus(res, 422);
    const items = res.body.detail.map((d: { loc: unknown[]; type: string }) => [d.loc, d.type]);
    expect(items).toEqual(
      expect.arrayContaining([
        [['body', 'name'], 'missing'],
        [['body', 'default_leverage'], 'greater_than_equal'],
        [['body', 'stopout_level'], 'less_than_equal'],
        [['body', 'currency'], 'string_pattern_mismatch'],
      ]),
    );
    expect(items).toHaveLength(4);
  });

  test('when a bound fails, then the message names the bound as Pydantic does', async () => {
    const low = await create({ name: uniqueName(), default_leverage: 0 });
    expect(low.body.detail[0].msg).toBe('Input should be greater than or equal to 1');
    const high = await create({ name: uniqueName(), margin_call_level: 500.01 });
    expect(high.body.detail[0].msg).toBe('Input should be less than or equal to 500');
    const long = await create({ name: 'x'.repeat(65) });
    expect(long.body.detail[0].msg).toBe('String should have at most 64 characters');
    const short = await create({ name: '' });
    expect(short.body.detail[0].msg).toBe('String should have at least 1 character');
  });

  test('when the body is malformed JSON, then 422 json_invalid', async () => {
    const res = await app.request('POST', '/groups', { token, rawBody: '{"name": "x",' });
    expectStatus(res, 422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', expect.any(Number)], type: 'json_invalid' });
  });

  test('when the body is a JSON array, then 422 and nothing is created', async () => {
    const before = await sql<{ n: string }>(app, 'select count(*) as n from trading_groups');
    const res = await app.request('POST', '/groups', { token, rawBody: '[{"name": "array"}]' });
    expectStatus(res, 422);
    const after = await sql<{ n: string }>(app, 'select count(*) as n from trading_groups');
    expect(after[0].n).toBe(before[0].n);
  });

  test('when a rejected body is sent, then no row is written', async () => {
    const name = uniqueName('Rejected');
    expectStatus(await create({ name, default_leverage: 1001 }), 422);
    expect(await sql(app, 'select id from trading_groups where name = ?', [name])).toEqual([]);
  });
});

describe('POST /groups defaults and answer', () => {
  test('when only a name is sent, then every omitted field takes the default of the Group table', async () => {
    const name = uniqueName('Defaults');
    const res = await create({ name });
    expectStatus(res, 201);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      name,
      description: null,
      currency: 'USD',
      default_leverage: 100,
      margin_call_level: 100,
      stopout_level: 20,
      commission_type: 'none',
      commission_value: 0,
      swap_enabled: true,
      swap_multiplier: 1,
      swap_free: false,
      swap_free_days: 0,
      is_islamic: false,
      max_exposure: null,
      net_max_exposure: false,
      max_open_positions: null,
      is_default: false,
      is_active: true,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expectGroupShape(res.body);
    // The stored row agrees with the answer.
    expect((await app.request('GET', `/groups/${res.body.id}`, { token })).body).toEqual(res.body);
  });

  test('when every field is sent, then 201 answers every always-present field with the values sent', async () => {
    const body = {
      name: uniqueName('Full'),
      description: 'Professional clients',
      currency: 'EUR',
      default_leverage: 500,
      margin_call_level: 150.5,
      stopout_level: 30.25,
      commission_type: 'per_lot',
      commission_value: 7.5,
      swap_enabled: false,
      swap_multiplier: 2.5,
      swap_free: true,
      swap_free_days: 30,
      is_islamic: true,
      max_exposure: 2_500_000.75,
      net_max_exposure: true,
    };
    const started = Date.now();
    const res = await create(body);
    expectStatus(res, 201);
    expectGroupShape(res.body);
    expect(res.body).toMatchObject(body);
    expect(res.body).toMatchObject({ is_default: false, is_active: true, max_open_positions: null });
    // created_at and updated_at are the moment of creation, in UTC.
    const createdAt = Date.parse(res.body.created_at);
    expect(createdAt).toBeGreaterThanOrEqual(started - 1000);
    expect(createdAt).toBeLessThanOrEqual(Date.now() + 1000);
    expect(res.body.created_at).toMatch(/Z$/);
    expect(res.body.updated_at).toBe(res.body.created_at);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  test('when is_default, is_active and max_open_positions are in the body, then they change nothing', async () => {
    const res = await create({ name: uniqueName('Ignored'), is_default: true, is_active: false, max_open_positions: 5 });
    expectStatus(res, 201);
    expect(res.body).toMatchObject({ is_default: false, is_active: true, max_open_positions: null });
    const row = await sql<{ is_default: boolean; is_active: boolean; max_open_positions: number | null }>(
      app,
      'select is_default, is_active, max_open_positions from trading_groups where id = ?',
      [res.body.id],
    );
    expect(row).toEqual([{ is_default: false, is_active: true, max_open_positions: null }]);
  });

  test('when id, created_at and unknown fields are in the body, then they are ignored', async () => {
    const id = '00000000-0000-4000-8000-000000000001';
    const res = await create({ name: uniqueName('Extra'), id, created_at: '2000-01-01T00:00:00Z', colour: 'red' });
    expectStatus(res, 201);
    expect(res.body.id).not.toBe(id);
    expect(res.body.created_at.startsWith('2000')).toBe(false);
    expect(res.body).not.toHaveProperty('colour');
  });

  test('when two groups are created, then each gets its own uuid', async () => {
    const [a, b] = await Promise.all([create({ name: uniqueName() }), create({ name: uniqueName() })]);
    expectStatus(a, 201);
    expectStatus(b, 201);
    expect(a.body.id).not.toBe(b.body.id);
  });
});

describe('POST /groups unique names', () => {
  test('when a name exists in another case, then 409 NAME_TAKEN and nothing is written', async () => {
    const name = uniqueName('Alpha');
    expectStatus(await create({ name }), 201);
    for (const other of [name, name.toUpperCase(), name.toLowerCase()]) {
      const res = await create({ name: other, currency: 'EUR' });
      expectError(res, 409, 'NAME_TAKEN');
    }
    const rows = await sql(app, 'select id from trading_groups where lower(name) = lower(?)', [name]);
    expect(rows).toHaveLength(1);
  });

  test('when names differ only by surrounding text, then both are accepted', async () => {
    const name = uniqueName('Beta');
    expectStatus(await create({ name }), 201);
    expectStatus(await create({ name: `${name}x` }), 201);
    expectStatus(await create({ name: `${name} ` }), 201);
  });

  test('when Alpha and ALPHA are posted at the same moment, then exactly one is created and the other is 409', async () => {
    // Several rounds: a check-then-insert in the application would let some pair through.
    for (let round = 0; round < 8; round++) {
      const base = uniqueName(`Race${round}`);
      const names = [base, base.toUpperCase(), base.toLowerCase()];
      const answers = await Promise.all(names.map((name) => create({ name })));
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).toEqual([201, 409, 409]);
      for (const a of answers.filter((x) => x.status === 409)) expect(a.body.code).toBe('NAME_TAKEN');
      expect(await sql(app, 'select id from trading_groups where lower(name) = lower(?)', [base])).toHaveLength(1);
    }
  });

  test('when a row with the same name in another case is inserted with SQL, then the database itself refuses it', async () => {
    const name = uniqueName('Db');
    expectStatus(await create({ name }), 201);
    const insert = sql(
      app,
      `insert into trading_groups (id, created_at, updated_at, name, currency, default_leverage, margin_call_level, stopout_level,
         commission_type, commission_value, swap_enabled, swap_multiplier, swap_free, swap_free_days, is_islamic, net_max_exposure)
       values (gen_random_uuid(), now(), now(), ?, 'USD', 100, 100, 20, 'none', 0, true, 1, false, 0, false, false)`,
      [name.toUpperCase()],
    );
    await expect(insert).rejects.toThrow(/trading_groups_name_ci_unique/);
  });
});
