import { randomBytes } from 'node:crypto';
import { sql, waitFor, type TestApp, type TestResponse } from '../../helpers/test-app';

export { sql };

/** The ledger rows of one account, in booking order. */
export async function ledgerOf(
  app: TestApp,
  login: number,
): Promise<Array<{ kind: string; amount: string; balance_after: string; reference_type: string; reference_id: string }>> {
  return sql(
    app,
    `select l.kind, l.amount::text as amount, l.balance_after::text as balance_after, l.reference_type, l.reference_id
       from ledger_entries l join accounts a on a.id = l.account_id
      where a.login = ? order by l.seq`,
    [login],
  );
}

/** How many ledger rows name this order ticket. */
export async function ledgerRowsForTicket(app: TestApp, ticket: number): Promise<number> {
  const rows = await sql<{ n: string }>(
    app,
    `select count(*)::text as n from ledger_entries where reference_type = 'order' and reference_id = ?`,
    [String(ticket)],
  );
  return Number(rows[0]!.n);
}

export interface EventRow {
  id: string;
  type: string;
  aggregate_type: string;
  aggregate_id: string;
  customer_id: string | null;
  data: Record<string, any>;
  published_at: Date | null;
}

/** Rows of the domain_events outbox of one type (and aggregate), in write order. */
export async function eventsOf(app: TestApp, type: string, aggregateId?: string | number): Promise<EventRow[]> {
  const rows = await sql<EventRow>(
    app,
    `select id, type, aggregate_type, aggregate_id, customer_id, data, published_at from domain_events
      where type = ? ${aggregateId === undefined ? '' : 'and aggregate_id = ?'} order by seq`,
    aggregateId === undefined ? [type] : [type, String(aggregateId)],
  );
  return rows.map((r) => ({ ...r, data: typeof r.data === 'string' ? JSON.parse(r.data) : r.data }));
}

/** A 422 whose detail has an item at exactly `loc` (and of `type` when given). */
export function expect422(res: TestResponse, loc: (string | number)[], type?: string): void {
  if (res.status !== 422) throw new Error(`expected 422 at ${JSON.stringify(loc)}, got ${res.status} ${res.text}`);
  const items = res.body.detail as Array<{ loc: unknown[]; type: string; msg: string }>;
  const hit = items.find((i) => JSON.stringify(i.loc) === JSON.stringify(loc));
  if (!hit) throw new Error(`no 422 item at ${JSON.stringify(loc)}: ${res.text}`);
  if (type !== undefined && hit.type !== type)
    throw new Error(`422 at ${JSON.stringify(loc)} has type ${hit.type}, expected ${type}: ${res.text}`);
  expect(typeof hit.msg).toBe('string');
}

/** A non-validation error: status and code. */
export function expectError(res: TestResponse, status: number, code: string): void {
  if (res.status !== status || res.body?.code !== code)
    throw new Error(`expected ${status} ${code}, got ${res.status} ${res.text}`);
  expect(typeof res.body.detail).toBe('string');
}

export function expectOk<T = any>(res: TestResponse<T>, status: number, what = 'request'): T {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${res.text}`);
  return res.body;
}

/**
 * Every item of a paged list (`{items, page, page_size, total}`), page by page at the
 * largest page size, so a helper never misses what lies past the first page.
 */
export async function allPages<T = any>(app: TestApp, token: string, path: string, pageSize = 200): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; ; page += 1) {
    const sep = path.includes('?') ? '&' : '?';
    const res = expectOk(
      await app.request('GET', `${path}${sep}page=${page}&page_size=${pageSize}`, { token }),
      200,
      `GET ${path}`,
    );
    items.push(...(res.items as T[]));
    if (res.items.length < pageSize || items.length >= res.total) return items;
  }
}

export const uniqueName = (label: string) => `${label}-${randomBytes(4).toString('hex')}`;

/** Opens a trading account without funding it; returns the whole answer. */
export async function openAccount(
  app: TestApp,
  token: string,
  customerId: string,
  body: Record<string, unknown>,
): Promise<TestResponse> {
  return app.request('POST', `/api/crm/customers/${customerId}/accounts`, { token, body });
}

export async function deposit(app: TestApp, token: string, login: number, amount: unknown, comment?: string) {
  return app.request('POST', `/api/backoffice/accounts/${login}/deposits`, {
    token,
    body: comment === undefined ? { amount } : { amount, comment },
  });
}

/** Waits for a bulk close run to complete and answers its view. */
export async function completedBulkClose(app: TestApp, token: string, runId: string, timeoutMs = 60_000): Promise<any> {
  return waitFor(
    'the run to complete',
    async () => {
      const res = await app.request('GET', `/orders/bulk-close/${runId}`, { token });
      return res.body.status === 'completed' ? res.body : undefined;
    },
    timeoutMs,
  );
}
