import { randomBytes } from 'node:crypto';
import { sql, type TestApp, type TestResponse } from '../../helpers/test-app';

/** Shared by the group, instrument and simulator test files (not a test file itself: jest matches *.test.ts only). */

export { sql };

/** A group name no other test of the run uses: `<label> <8 hex>`. */
export function uniqueName(label = 'G'): string {
  return `${label} ${randomBytes(4).toString('hex')}`;
}

/** A symbol no other test of the file uses: capital letters and digits. */
export function uniqueSymbol(prefix = 'S'): string {
  return `${prefix}${randomBytes(4).toString('hex').toUpperCase()}`;
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An ISO 8601 UTC date-time as JSON carries it (what Date#toISOString writes). */
export function expectDateTime(value: unknown): void {
  expect(typeof value).toBe('string');
  expect(value).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
  expect(Number.isNaN(Date.parse(value as string))).toBe(false);
}

/** Fails with the whole answer, so a wrong status explains itself. */
export function expectStatus(res: TestResponse, status: number): void {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text}`);
}

/** A 422 with exactly one validation item at `loc` of `type`, in the service's error format. */
export function expectOneValidationError(res: TestResponse, loc: (string | number)[], type: string): void {
  expectStatus(res, 422);
  expect(res.body).toEqual({ detail: [{ loc, msg: expect.any(String), type }] });
  expect(res.body.detail[0].msg.length).toBeGreaterThan(0);
}

/** The `{detail, code}` body of every non-validation error. */
export function expectError(res: TestResponse, status: number, code: string): void {
  expectStatus(res, status);
  expect(res.body).toEqual({ detail: expect.any(String), code });
  expect(res.body.detail.length).toBeGreaterThan(0);
}

/** The fields of the Group (response) table that are always present, with their JSON types. */
export const ALWAYS_PRESENT: Record<string, 'string' | 'number' | 'integer' | 'boolean' | 'string|null'> = {
  id: 'string',
  name: 'string',
  description: 'string|null',
  currency: 'string',
  default_leverage: 'integer',
  margin_call_level: 'number',
  stopout_level: 'number',
  commission_type: 'string',
  commission_value: 'number',
  swap_enabled: 'boolean',
  swap_multiplier: 'number',
  swap_free: 'boolean',
  swap_free_days: 'integer',
  is_islamic: 'boolean',
  is_default: 'boolean',
  is_active: 'boolean',
  created_at: 'string',
  updated_at: 'string',
};

/** Every always-present field of the Group (response) table is there with its type; id is a uuid, times are date-times. */
export function expectGroupShape(group: Record<string, unknown>): void {
  for (const [field, type] of Object.entries(ALWAYS_PRESENT)) {
    expect([field, field in group]).toEqual([field, true]);
    const value = group[field];
    if (type === 'integer') expect([field, Number.isInteger(value)]).toEqual([field, true]);
    else if (type === 'string|null') expect([field, value === null || typeof value === 'string']).toEqual([field, true]);
    else expect([field, typeof value]).toEqual([field, type]);
  }
  expect(group.id).toMatch(UUID);
  expectDateTime(group.created_at);
  expectDateTime(group.updated_at);
  // The optional fields, when present, have their table types.
  if ('max_exposure' in group) expect(group.max_exposure === null || typeof group.max_exposure === 'number').toBe(true);
  if ('net_max_exposure' in group) expect(typeof group.net_max_exposure).toBe('boolean');
  if ('max_open_positions' in group)
    expect(group.max_open_positions === null || Number.isInteger(group.max_open_positions)).toBe(true);
}

/** Audit entries of one entity, oldest first. */
export async function auditOf(app: TestApp, token: string, query: Record<string, string>): Promise<any[]> {
  const res = await app.request('GET', `/api/admin/audit?${new URLSearchParams({ page_size: '200', ...query })}`, { token });
  expectStatus(res, 200);
  return [...res.body.items].reverse();
}
