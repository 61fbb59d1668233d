import { adminToken } from '../../helpers/identity';
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

/** POST /groups/{id}/clone. */

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'groupclone', env: { ROLE: 'api' } });
  token = await adminToken(app);
});
afterAll(() => app?.stop());

async function createGroup(body: Record<string, unknown>): Promise<any> {
  const res = await app.request('POST', '/groups', { token, body });
  expectStatus(res, 201);
  return res.body;
}

async function clone(id: string): Promise<any> {
  const res = await app.request('POST', `/groups/${id}/clone`, { token });
  expectStatus(res, 201);
  return res.body;
}

async function createInstrument(digits = 5): Promise<string> {
  const symbol = uniqueSymbol('C');
  const res = await app.request('POST', '/api/platform/instruments', {
    token,
    body: { symbol, digits, contract_size: 100_000, base_currency: 'EUR', quote_currency: 'USD' },
  });
  expectStatus(res, 201);
  return symbol;
}

async function rowsOf(groupId: string): Promise<any[]> {
  const res = await app.request('GET', `/groups/${groupId}/instruments`, { token });
  expectStatus(res, 200);
  return res.body.items;
}

/** The fields a clone must copy: all but identity, name, the two flags and the times. */
function copiedFields(g: Record<string, unknown>) {
  const { id: _id, name: _name, is_active: _a, is_default: _d, created_at: _c, updated_at: _u, ...rest } = g;
  return rest;
}

function rowTerms(r: Record<string, unknown>) {
  const { group_id: _g, created_at: _c, updated_at: _u, ...rest } = r;
  return rest;
}

describe('POST /groups/{id}/clone copies', () => {
  test('when a group with every field set and instrument rows is cloned, then 201 copies every field and every row', async () => {
    const source = await createGroup({
      name: uniqueName('Full'),
      description: 'Copied description',
      currency: 'GBP',
      default_leverage: 222,
      margin_call_level: 123.45,
      stopout_level: 33.3,
      commission_type: 'percent',
      commission_value: 12.5,
      swap_enabled: false,
      swap_multiplier: 3.75,
      swap_free: true,
      swap_free_days: 14,
      is_islamic: true,
      max_exposure: 987_654.32,
      net_max_exposure: true,
    });
    // max_open_positions is not part of creation; it is set by PATCH and must be copied too.
    const patched = await app.request('PATCH', `/groups/${source.id}`, { token, body: { max_open_positions: 77 } });
    expectStatus(patched, 200);
    const [s1, s2] = [await createInstrument(5), await createInstrument(2)];
    for (const [symbol, body] of [
      [s1, { enabled: true, spread: 1.5, commission_value: 3.25, swap_long: -2.5, swap_short: 0.75 }],
      [s2, { enabled: false, spread: 0, swap_long: 1, swap_short: -1 }],
    ] as const) {
      expectStatus(await app.request('PUT', `/groups/${source.id}/instruments/${symbol}`, { token, body }), 201);
    }
    const sourceNow = (await app.request('GET', `/groups/${source.id}`, { token })).body;

    const res = await app.request('POST', `/groups/${source.id}/clone`, { token });
    expectStatus(res, 201);
    const copy = res.body;
    expectGroupShape(copy);
    expect(copy.id).not.toBe(source.id);
    expect(copy.name).toBe(`${source.name} (copy)`);
    expect(copiedFields(copy)).toEqual(copiedFields(sourceNow));
    expect(copy.max_open_positions).toBe(77);
    expect(copy).toMatchObject({ is_active: false, is_default: false });
    // The stored clone says the same as the answer.
    expect((await app.request('GET', `/groups/${copy.id}`, { token })).body).toEqual(copy);

    const sourceRows = await rowsOf(source.id);
    const copyRows = await rowsOf(copy.id);
    expect(sourceRows).toHaveLength(2);
    expect(copyRows.map(rowTerms)).toEqual(sourceRows.map(rowTerms));
    for (const row of copyRows) expect(row.group_id).toBe(copy.id);

    // The source is untouched, rows included.
    expect((await app.request('GET', `/groups/${source.id}`, { token })).body).toEqual(sourceNow);
    expect(await rowsOf(source.id)).toEqual(sourceRows);
  });

  test('when the rows of a clone change, then the source rows do not (the rows are copies, not shared)', async () => {
    const source = await createGroup({ name: uniqueName('Rows') });
    const symbol = await createInstrument();
    const body = { enabled: true, spread: 2, swap_long: 0, swap_short: 0 };
    expectStatus(await app.request('PUT', `/groups/${source.id}/instruments/${symbol}`, { token, body }), 201);
    const copy = await clone(source.id);
    expectStatus(
      await app.request('PUT', `/groups/${copy.id}/instruments/${symbol}`, { token, body: { ...body, spread: 9 } }),
      200,
    );
    expectStatus(await app.request('DELETE', `/groups/${copy.id}/instruments/${symbol}`, { token }), 204);
    expect((await rowsOf(source.id)).map((r) => r.spread)).toEqual([2]);
  });

  test('when a group without instrument rows is cloned, then the clone has none', async () => {
    const copy = await clone((await createGroup({ name: uniqueName('Empty') })).id);
    expect(await rowsOf(copy.id)).toEqual([]);
  });

  test('when the default active group is cloned, then the clone is inactive and not default and the source stays default', async () => {
    const source = await createGroup({ name: uniqueName('Default') });
    expectStatus(await app.request('PATCH', `/groups/${source.id}`, { token, body: { is_default: true } }), 200);
    const copy = await clone(source.id);
    expect(copy).toMatchObject({ is_active: false, is_default: false });
    expect((await app.request('GET', `/groups/${source.id}`, { token })).body).toMatchObject({
      is_active: true,
      is_default: true,
    });
  });

  test('when a clone is cloned, then the new one is "<clone name> (copy)" and also inactive', async () => {
    const source = await createGroup({ name: uniqueName('Chain') });
    const first = await clone(source.id);
    const second = await clone(first.id);
    expect(second.name).toBe(`${source.name} (copy) (copy)`);
    expect(second.is_active).toBe(false);
  });

  test('when a clone is made, then created_at and updated_at are new', async () => {
    const source = await createGroup({ name: uniqueName('Times') });
    await clockPast(source.created_at);
    const copy = await clone(source.id);
    expect(Date.parse(copy.created_at)).toBeGreaterThan(Date.parse(source.created_at));
    expect(copy.updated_at).toBe(copy.created_at);
  });
});

describe('POST /groups/{id}/clone names', () => {
  test('when a group is cloned three times, then the names are (copy), (copy 2), (copy 3)', async () => {
    const source = await createGroup({ name: uniqueName('Standard') });
    const names = [];
    for (let i = 0; i < 3; i++) names.push((await clone(source.id)).name);
    expect(names).toEqual([`${source.name} (copy)`, `${source.name} (copy 2)`, `${source.name} (copy 3)`]);
  });

  test('when a group named "X (copy)" already exists, then the clone of X is "X (copy 2)"', async () => {
    const name = uniqueName('X');
    const source = await createGroup({ name });
    await createGroup({ name: `${name} (copy)` });
    expect((await clone(source.id)).name).toBe(`${name} (copy 2)`);
  });

  test('when "x (COPY)" exists in another case, then the clone of X still avoids it', async () => {
    const name = uniqueName('Case');
    const source = await createGroup({ name });
    await createGroup({ name: `${name.toUpperCase()} (COPY)` });
    expect((await clone(source.id)).name).toBe(`${name} (copy 2)`);
  });

  test('when (copy) and (copy 3) exist, then the next clones fill (copy 2) and then take (copy 4)', async () => {
    const name = uniqueName('Gap');
    const source = await createGroup({ name });
    await createGroup({ name: `${name} (copy)` });
    await createGroup({ name: `${name} (copy 3)` });
    expect((await clone(source.id)).name).toBe(`${name} (copy 2)`);
    expect((await clone(source.id)).name).toBe(`${name} (copy 4)`);
  });

  test('when a clone is deleted, then its name is free again for the next clone', async () => {
    const source = await createGroup({ name: uniqueName('Reuse') });
    const first = await clone(source.id);
    await clone(source.id);
    expectStatus(await app.request('DELETE', `/groups/${first.id}`, { token }), 204);
    expect((await clone(source.id)).name).toBe(`${source.name} (copy)`);
  });

  test('when the name holds LIKE wildcards and backslashes, then collisions are still found', async () => {
    const name = `50%_off\\ ${uniqueName('W')}`;
    const source = await createGroup({ name });
    await createGroup({ name: `${name} (copy)` });
    expect((await clone(source.id)).name).toBe(`${name} (copy 2)`);
    expect((await clone(source.id)).name).toBe(`${name} (copy 3)`);
  });

  test('when names lower-case differently in the database and in JavaScript (final sigma), then the clash moves on to the next number', async () => {
    // Postgres lowercases Σ to σ; JavaScript to ς at the end of a word. The names the service
    // reads back then miss the clash, and only the unique index catches it: the retry path.
    const name = `ΟΔΟΣ ${uniqueName('Σ').toUpperCase()}Σ`;
    const source = await createGroup({ name });
    const [{ lower }] = await sql<{ lower: string }>(app, 'select lower(?) as lower', [`${name} (copy)`]);
    expect(lower).not.toBe(`${name} (copy)`.toLowerCase()); // the premise of this test
    expect((await clone(source.id)).name).toBe(`${name} (copy)`);
    expect((await clone(source.id)).name).toBe(`${name} (copy 2)`);
    expect((await clone(source.id)).name).toBe(`${name} (copy 3)`);
  });

  test('when the name has 64 characters, then the clone name is exactly 64 characters ending " (copy)"', async () => {
    const name = `L${uniqueName('').trim()}`.padEnd(64, 'z');
    expect(name).toHaveLength(64);
    const source = await createGroup({ name });
    const copy = await clone(source.id);
    expect(copy.name).toHaveLength(64);
    expect(copy.name).toBe(`${name.slice(0, 57)} (copy)`);
  });

  test('when a 64-character name is cloned ten times, then the tenth is exactly 64 characters ending " (copy 10)"', async () => {
    const name = `T${uniqueName('').trim()}`.padEnd(64, 'q');
    const source = await createGroup({ name });
    const names: string[] = [];
    for (let i = 1; i <= 10; i++) names.push((await clone(source.id)).name);
    expect(names[0]).toBe(`${name.slice(0, 57)} (copy)`);
    expect(names[1]).toBe(`${name.slice(0, 55)} (copy 2)`);
    expect(names[8]).toBe(`${name.slice(0, 55)} (copy 9)`);
    expect(names[9]).toBe(`${name.slice(0, 54)} (copy 10)`);
    for (const n of names) expect(n).toHaveLength(64);
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(10);
  });

  test('when two 64-character names differ only in the part cut off, then their clones do not clash', async () => {
    const stem = `D${uniqueName('').trim()}`.padEnd(57, 'd');
    const a = await createGroup({ name: `${stem}1234567` });
    const b = await createGroup({ name: `${stem}7654321` });
    expect((await clone(a.id)).name).toBe(`${stem} (copy)`);
    expect((await clone(b.id)).name).toBe(`${stem.slice(0, 55)} (copy 2)`);
  });

  test('when a long name ends in an emoji at the cut, then the clone name keeps whole characters', async () => {
    // 56 letters and an emoji: the cut at 57 UTF-16 units would split the emoji's surrogate pair.
    const name = `E${uniqueName('').trim()}`.padEnd(56, 'e') + '😀';
    expect(name).toHaveLength(58);
    const source = await createGroup({ name });
    const copy = await clone(source.id);
    expect(copy.name).toBe(`${name.slice(0, 56)} (copy)`);
    expect(copy.name).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    const stored = await sql<{ name: string }>(app, 'select name from trading_groups where id = ?', [copy.id]);
    expect(stored[0].name).toBe(copy.name);
  });

  test('when ten clones of one group race, then all ten are 201 with ten distinct names', async () => {
    const source = await createGroup({ name: uniqueName('Race') });
    const symbol = await createInstrument();
    const body = { enabled: true, spread: 1, swap_long: 0, swap_short: 0 };
    expectStatus(await app.request('PUT', `/groups/${source.id}/instruments/${symbol}`, { token, body }), 201);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => app.request('POST', `/groups/${source.id}/clone`, { token })),
    );
    for (const a of answers) expectStatus(a, 201);
    const names = answers.map((a) => a.body.name);
    expect(new Set(names).size).toBe(10);
    expect([...names].sort()).toEqual(
      [`${source.name} (copy)`, ...Array.from({ length: 9 }, (_, i) => `${source.name} (copy ${i + 2})`)].sort(),
    );
    // Every clone got the rows.
    for (const a of answers) expect(await rowsOf(a.body.id)).toHaveLength(1);
  });

  test('when clones of one group race with long names, then the names are still distinct and within 64 characters', async () => {
    const source = await createGroup({ name: `R${uniqueName('').trim()}`.padEnd(64, 'r') });
    const answers = await Promise.all(
      Array.from({ length: 12 }, () => app.request('POST', `/groups/${source.id}/clone`, { token })),
    );
    for (const a of answers) expectStatus(a, 201);
    const names = answers.map((a) => a.body.name as string);
    expect(new Set(names).size).toBe(12);
    for (const n of names) expect(n.length).toBeLessThanOrEqual(64);
  });
});

describe('POST /groups/{id}/clone errors', () => {
  test('when the group does not exist, then 404 NOT_FOUND and nothing is created', async () => {
    const before = await sql<{ n: string }>(app, 'select count(*) as n from trading_groups');
    expectError(await app.request('POST', '/groups/7d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a/clone', { token }), 404, 'NOT_FOUND');
    expect(await sql<{ n: string }>(app, 'select count(*) as n from trading_groups')).toEqual(before);
  });

  test('when the id is not a uuid, then 422 uuid_parsing at [path, group_id]', async () => {
    expectOneValidationError(
      await app.request('POST', '/groups/not-a-uuid/clone', { token }),
      ['path', 'group_id'],
      'uuid_parsing',
    );
    expectOneValidationError(await app.request('POST', '/groups/123/clone', { token }), ['path', 'group_id'], 'uuid_parsing');
  });

  test('when a body is sent with the clone, then it is ignored (the clone takes the source name and terms)', async () => {
    const source = await createGroup({ name: uniqueName('Body'), default_leverage: 50 });
    const res = await app.request('POST', `/groups/${source.id}/clone`, {
      token,
      body: { name: 'Other', is_active: true, is_default: true, default_leverage: 10 },
    });
    expectStatus(res, 201);
    expect(res.body).toMatchObject({ name: `${source.name} (copy)`, is_active: false, is_default: false, default_leverage: 50 });
  });
});
