import { adminToken } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import {
  expectDateTime,
  expectError,
  expectOneValidationError,
  expectStatus,
  sql,
  uniqueName,
  uniqueSymbol,
  UUID,
} from './groups-kit';

/** Instruments (POST/GET /api/platform/instruments) and group instrument rows. */

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'instruments', env: { ROLE: 'api' } });
  token = await adminToken(app);
});
afterAll(() => app?.stop());

const MISSING_ID = '3b0a8c43-5b2e-4d4f-9a60-1c2d3e4f5a6b';

function instrumentBody(overrides: Record<string, unknown> = {}) {
  return {
    symbol: uniqueSymbol('I'),
    digits: 5,
    contract_size: 100_000,
    base_currency: 'EUR',
    quote_currency: 'USD',
    ...overrides,
  };
}

const createInstrument = (body: Record<string, unknown>) => app.request('POST', '/api/platform/instruments', { token, body });

async function newGroup(): Promise<string> {
  const res = await app.request('POST', '/groups', { token, body: { name: uniqueName('Inst') } });
  expectStatus(res, 201);
  return res.body.id;
}

async function newInstrument(overrides: Record<string, unknown> = {}): Promise<any> {
  const res = await createInstrument(instrumentBody(overrides));
  expectStatus(res, 201);
  return res.body;
}

const ROW = { enabled: true, spread: 1.5, commission_value: 2.5, swap_long: -3.25, swap_short: 1.75 };
const put = (groupId: string, symbol: string, body: unknown) =>
  app.request('PUT', `/groups/${groupId}/instruments/${symbol}`, { token, body });

describe('POST /api/platform/instruments', () => {
  test('when a valid instrument is posted, then 201 with every field', async () => {
    const body = instrumentBody({ description: 'Euro vs US dollar' });
    const res = await createInstrument(body);
    expectStatus(res, 201);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      ...body,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expectDateTime(res.body.created_at);
    const listed = (await app.request('GET', '/api/platform/instruments', { token })).body.items;
    expect(listed).toContainEqual(res.body);
  });

  test('when description is omitted, then it is null', async () => {
    expect((await newInstrument()).description).toBeNull();
  });

  test.each([
    ['symbol', 'eurusd', 'string_pattern_mismatch'],
    ['symbol', '', 'string_pattern_mismatch'],
    ['symbol', '.EUR', 'string_pattern_mismatch'],
    ['symbol', '-EUR', 'string_pattern_mismatch'],
    ['symbol', 'EUR USD', 'string_pattern_mismatch'],
    ['symbol', 'EUR/USD', 'string_pattern_mismatch'],
    ['symbol', 'A'.repeat(33), 'string_pattern_mismatch'],
    ['symbol', 12, 'string_type'],
    ['symbol', undefined, 'missing'],
    ['digits', -1, 'greater_than_equal'],
    ['digits', 11, 'less_than_equal'],
    ['digits', 2.5, 'int_type'],
    ['digits', '5', 'int_type'],
    ['digits', undefined, 'missing'],
    ['contract_size', 0, 'greater_than'],
    ['contract_size', -1, 'greater_than'],
    ['contract_size', '100', 'float_type'],
    ['contract_size', undefined, 'missing'],
    ['base_currency', 'eur', 'string_pattern_mismatch'],
    ['base_currency', 'EURO', 'string_pattern_mismatch'],
    ['base_currency', undefined, 'missing'],
    ['quote_currency', 'US', 'string_pattern_mismatch'],
    ['quote_currency', 1, 'string_type'],
    ['quote_currency', undefined, 'missing'],
    ['description', 5, 'string_type'],
    ['description', 'd'.repeat(501), 'string_too_long'],
  ])('when %s is %j, then 422 at [body, %s] of type %s', async (field, value, type) => {
    const body: Record<string, unknown> = instrumentBody({ [field]: value });
    if (value === undefined) delete body[field];
    expectOneValidationError(await createInstrument(body), ['body', field], type);
  });

  test.each([
    ['symbol', 'A'.repeat(31) + '9'],
    ['symbol', '9'],
    ['symbol', 'BRK.B'],
    ['symbol', 'US30-CASH'],
    ['symbol', 'X_1'],
    ['digits', 0],
    ['digits', 10],
    ['contract_size', 0.0001],
    ['contract_size', 1],
    ['contract_size', 100_000],
    ['description', null],
  ])('when %s is %j, then 201 and it is stored as sent', async (field, value) => {
    // Symbols must be unique per file run: prefix-free ones get a random tail where the pattern allows.
    const v = field === 'symbol' && value !== 'A'.repeat(31) + '9' ? `${value}${uniqueSymbol('')}`.slice(0, 32) : value;
    const res = await createInstrument(instrumentBody({ [field]: v }));
    expectStatus(res, 201);
    expect(res.body[field]).toEqual(v);
    const listed = (await app.request('GET', '/api/platform/instruments', { token })).body.items;
    expect(listed.find((i: any) => i.id === res.body.id)[field]).toEqual(v);
  });

  test('when a value has more decimal places than the instrument keeps, then 422 rather than a silently rounded value', async () => {
    // contract_size is numeric(20,4): 0.00001 used to be answered as sent and stored as 0.
    const res = await createInstrument(instrumentBody({ contract_size: 0.00001 }));
    expectOneValidationError(res, ['body', 'contract_size'], 'decimal_max_places');
    expect(
      (await app.request('GET', '/api/platform/instruments', { token })).body.items.map((i: any) => i.contract_size),
    ).not.toContain(0);
  });

  test('when the symbol exists, then 409 SYMBOL_TAKEN and the first one is unchanged', async () => {
    const first = await newInstrument({ digits: 3 });
    expectError(await createInstrument(instrumentBody({ symbol: first.symbol, digits: 2 })), 409, 'SYMBOL_TAKEN');
    const listed = (await app.request('GET', '/api/platform/instruments', { token })).body.items;
    expect(listed.filter((i: any) => i.symbol === first.symbol)).toEqual([first]);
  });

  test('when the same symbol is posted twice at once, then one 201 and one 409 SYMBOL_TAKEN', async () => {
    const body = instrumentBody();
    const answers = await Promise.all([createInstrument(body), createInstrument(body)]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
  });
});

describe('GET /api/platform/instruments', () => {
  test('when instruments exist, then all are listed by symbol', async () => {
    await newInstrument({ symbol: `ZZ${uniqueSymbol('')}` });
    await newInstrument({ symbol: `AA${uniqueSymbol('')}` });
    const res = await app.request('GET', '/api/platform/instruments', { token });
    expectStatus(res, 200);
    const symbols = res.body.items.map((i: any) => i.symbol);
    expect(symbols).toEqual([...symbols].sort());
    const [count] = await sql<{ n: string }>(app, 'select count(*) as n from instruments');
    expect(symbols).toHaveLength(Number(count.n));
  });
});

describe('PUT /groups/{id}/instruments/{symbol}', () => {
  test('when a row is put the first time, then 201; when it is put again, then 200 with the new terms', async () => {
    const [groupId, inst] = [await newGroup(), await newInstrument()];
    const first = await put(groupId, inst.symbol, ROW);
    expectStatus(first, 201);
    expect(first.body).toEqual({
      group_id: groupId,
      symbol: inst.symbol,
      ...ROW,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expectDateTime(first.body.created_at);

    const next = { enabled: false, spread: 0, commission_value: 0, swap_long: 4, swap_short: -4 };
    const second = await put(groupId, inst.symbol, next);
    expectStatus(second, 200);
    expect(second.body).toMatchObject({ group_id: groupId, symbol: inst.symbol, ...next, created_at: first.body.created_at });
    expect(Date.parse(second.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(first.body.updated_at));

    const rows = (await app.request('GET', `/groups/${groupId}/instruments`, { token })).body.items;
    expect(rows).toEqual([second.body]);
  });

  test('when commission_value is omitted or null on replace, then the override is cleared (a PUT replaces the row)', async () => {
    const [groupId, inst] = [await newGroup(), await newInstrument()];
    expectStatus(await put(groupId, inst.symbol, ROW), 201);
    const { commission_value: _c, ...withoutCommission } = ROW;
    const res = await put(groupId, inst.symbol, withoutCommission);
    expectStatus(res, 200);
    expect(res.body.commission_value).toBeNull();
    expectStatus(await put(groupId, inst.symbol, ROW), 200);
    expect((await put(groupId, inst.symbol, { ...ROW, commission_value: null })).body.commission_value).toBeNull();
  });

  test.each([
    ['enabled', undefined, 'missing'],
    ['enabled', 'yes', 'bool_type'],
    ['spread', undefined, 'missing'],
    ['spread', -0.01, 'greater_than_equal'],
    ['spread', 100_000.01, 'less_than_equal'],
    ['spread', 'wide', 'float_type'],
    ['commission_value', -0.01, 'greater_than_equal'],
    ['commission_value', 50.01, 'less_than_equal'],
    ['commission_value', 'x', 'float_type'],
    ['swap_long', undefined, 'missing'],
    ['swap_long', -100_000.01, 'greater_than_equal'],
    ['swap_long', '1', 'float_type'],
    ['swap_short', undefined, 'missing'],
    ['swap_short', 100_000.01, 'less_than_equal'],
    ['spread', 0.001, 'decimal_max_places'],
    ['swap_long', 0.00001, 'decimal_max_places'],
    ['swap_short', -0.00001, 'decimal_max_places'],
    ['commission_value', 0.00001, 'decimal_max_places'],
  ])('when %s is %j, then 422 at [body, %s] of type %s and no row is written', async (field, value, type) => {
    const [groupId, inst] = [await newGroup(), await newInstrument()];
    const body: Record<string, unknown> = { ...ROW, [field]: value };
    if (value === undefined) delete body[field];
    expectOneValidationError(await put(groupId, inst.symbol, body), ['body', field], type);
    expect((await app.request('GET', `/groups/${groupId}/instruments`, { token })).body.items).toEqual([]);
  });

  test.each([
    ['spread', 0],
    ['spread', 100_000],
    ['commission_value', 0],
    ['commission_value', 50],
    ['swap_long', -100_000],
    ['swap_short', 100_000],
  ])('when %s is %j (a bound), then 201 with that value', async (field, value) => {
    const [groupId, inst] = [await newGroup(), await newInstrument()];
    const res = await put(groupId, inst.symbol, { ...ROW, [field]: value });
    expectStatus(res, 201);
    expect(res.body[field]).toBe(value);
    const rows = (await app.request('GET', `/groups/${groupId}/instruments`, { token })).body.items;
    expect(rows[0][field]).toBe(value);
  });

  test('when the group or the symbol is unknown, then 404 NOT_FOUND; when the group id is not a uuid, then 422', async () => {
    const [groupId, inst] = [await newGroup(), await newInstrument()];
    expectError(await put(MISSING_ID, inst.symbol, ROW), 404, 'NOT_FOUND');
    expectError(await put(groupId, 'NOSUCHSYMBOL', ROW), 404, 'NOT_FOUND');
    expectError(await put(groupId, inst.symbol.toLowerCase(), ROW), 404, 'NOT_FOUND');
    expectOneValidationError(await put('abc', inst.symbol, ROW), ['path', 'group_id'], 'uuid_parsing');
    expect((await app.request('GET', `/groups/${groupId}/instruments`, { token })).body.items).toEqual([]);
  });

  test('when the first row of a pair is put several times at once, then one 201, the others 200, and one row', async () => {
    const [groupId, inst] = [await newGroup(), await newInstrument()];
    const answers = await Promise.all([0, 1, 2, 3].map((i) => put(groupId, inst.symbol, { ...ROW, spread: i })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 201]);
    const rows = (await app.request('GET', `/groups/${groupId}/instruments`, { token })).body.items;
    expect(rows).toHaveLength(1);
  });
});

describe('GET and DELETE /groups/{id}/instruments', () => {
  test('when a group has rows, then GET lists them by symbol; an unknown group is 404', async () => {
    const groupId = await newGroup();
    const b = await newInstrument({ symbol: `BB${uniqueSymbol('')}` });
    const a = await newInstrument({ symbol: `AA${uniqueSymbol('')}` });
    expectStatus(await put(groupId, b.symbol, ROW), 201);
    expectStatus(await put(groupId, a.symbol, { ...ROW, enabled: false }), 201);
    const res = await app.request('GET', `/groups/${groupId}/instruments`, { token });
    expectStatus(res, 200);
    expect(res.body.items.map((r: any) => r.symbol)).toEqual([a.symbol, b.symbol]);
    expect(res.body.items[0]).toMatchObject({ group_id: groupId, enabled: false });
    expectError(await app.request('GET', `/groups/${MISSING_ID}/instruments`, { token }), 404, 'NOT_FOUND');
    expectOneValidationError(await app.request('GET', '/groups/1/instruments', { token }), ['path', 'group_id'], 'uuid_parsing');
  });

  test("when a row is deleted, then 204, it is gone, and deleting it again is 404; the group's other rows stay", async () => {
    const groupId = await newGroup();
    const [a, b] = [await newInstrument(), await newInstrument()];
    expectStatus(await put(groupId, a.symbol, ROW), 201);
    expectStatus(await put(groupId, b.symbol, ROW), 201);
    const res = await app.request('DELETE', `/groups/${groupId}/instruments/${a.symbol}`, { token });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const rows = (await app.request('GET', `/groups/${groupId}/instruments`, { token })).body.items;
    expect(rows.map((r: any) => r.symbol)).toEqual([b.symbol]);
    expectError(await app.request('DELETE', `/groups/${groupId}/instruments/${a.symbol}`, { token }), 404, 'NOT_FOUND');
    // After a delete, a put creates again.
    expectStatus(await put(groupId, a.symbol, ROW), 201);
  });

  test('when the group, symbol or row is unknown, then DELETE is 404', async () => {
    const groupId = await newGroup();
    const inst = await newInstrument();
    expectError(await app.request('DELETE', `/groups/${groupId}/instruments/${inst.symbol}`, { token }), 404, 'NOT_FOUND');
    expectError(await app.request('DELETE', `/groups/${MISSING_ID}/instruments/${inst.symbol}`, { token }), 404, 'NOT_FOUND');
    expectError(await app.request('DELETE', `/groups/${groupId}/instruments/NOPE`, { token }), 404, 'NOT_FOUND');
  });
});
