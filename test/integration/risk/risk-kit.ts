import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { ALL_QUEUES } from '../../../src/jobs/queues';
import type { LoggedIn } from '../../helpers/identity';
import { sql, testRedis, waitFor, type TestApp } from '../../helpers/test-app';

export interface SeedOrder {
  /** Seconds from open to close. */
  hold: number;
  /** Decimal profit in the account currency. */
  profit: number;
  /** How long ago it closed, in days (fractions allowed). */
  daysAgo?: number;
  symbol?: string;
}

/** A group of its own (so a test's rule can narrow to it), active. */
export async function newGroup(app: TestApp, admin: string): Promise<string> {
  const res = await app.request('POST', '/groups', { token: admin, body: { name: `R-${randomBytes(4).toString('hex')}` } });
  if (res.status !== 201) throw new Error(`group: ${res.status} ${res.text}`);
  return res.body.id;
}

/** A trading account of `customer` in `groupId`; returns its login and id. */
export async function tradingAccount(
  app: TestApp,
  admin: string,
  customer: LoggedIn,
  groupId: string,
  kind: 'live' | 'demo' | 'prop' = 'live',
): Promise<{ login: number; id: string }> {
  const res = await app.request('POST', `/api/crm/customers/${customer.id}/accounts`, {
    token: admin,
    body: { kind, group_id: groupId },
  });
  if (res.status !== 201) throw new Error(`account: ${res.status} ${res.text}`);
  const [row] = await sql<{ id: string }>(app, 'select id from accounts where login = ?', [res.body.login]);
  return { login: res.body.login, id: row!.id };
}

/**
 * Closed orders written straight into the table, with chosen hold times, profits and close
 * times: what the classification reads (no trading history could be produced through the API
 * with hold times of hours in a test of seconds).
 */
export async function seedClosedOrders(app: TestApp, account: { login: number; id: string }, orders: SeedOrder[]) {
  if (!orders.length) return;
  const rows = orders.map((o) => ({
    hold: o.hold,
    profit: o.profit.toFixed(2),
    days_ago: o.daysAgo ?? 1,
    symbol: o.symbol ?? 'EURUSD',
  }));
  await sql(
    app,
    `insert into orders (id, created_at, updated_at, account_id, login, symbol, cmd, volume, open_price, contract_size,
                         status, closed_at, close_price, profit, close_reason)
     select gen_random_uuid(), c - make_interval(secs => r.hold), c, ?::uuid, ?::bigint, r.symbol, 0, 0.01, 1.1, 100000,
            'closed', c, 1.1, r.profit::numeric, 'client'
       from jsonb_to_recordset(?::jsonb) as r(hold float8, profit text, days_ago float8, symbol text),
            lateral (select now() - make_interval(secs => r.days_ago * 86400) as c) t`,
    [account.id, account.login, JSON.stringify(rows)],
  );
}

/** n orders: `wins` of them won `win` each, the rest lost `loss` each, all held `hold` seconds. */
export function trades(n: number, wins: number, hold: number, win = 10, loss = -10, extra: Partial<SeedOrder> = {}): SeedOrder[] {
  return Array.from({ length: n }, (_, i) => ({ hold, profit: i < wins ? win : loss, ...extra }));
}

/** Row count and a checksum of every table but the ones named, keyed by table. */
export async function tableFingerprints(app: TestApp, except: string[]): Promise<Record<string, string>> {
  const tables = await sql<{ table_name: string }>(
    app,
    `select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1`,
  );
  const out: Record<string, string> = {};
  for (const { table_name: t } of tables) {
    if (except.includes(t)) continue;
    const [row] = await sql<{ n: string; sum: string | null }>(
      app,
      `select count(*)::text as n, md5(coalesce(string_agg(md5(x::text), '' order by md5(x::text)), '')) as sum from "${t}" x`,
    );
    out[t] = `${row!.n}:${row!.sum}`;
  }
  return out;
}

/** Every job in every queue of the app's prefix: id, name, and whether a schedule made it. */
export async function allJobs(app: TestApp): Promise<Array<{ id: string; name: string; scheduled: boolean; queue: string }>> {
  const connection = testRedis();
  const out: Array<{ id: string; name: string; scheduled: boolean; queue: string }> = [];
  try {
    for (const name of ALL_QUEUES) {
      const queue = new Queue(name, { connection, prefix: app.config.queuePrefix });
      const jobs = await queue.getJobs(
        ['waiting', 'active', 'completed', 'failed', 'delayed', 'prioritized', 'waiting-children'],
        0,
        -1,
      );
      for (const job of jobs)
        if (job?.id) out.push({ id: job.id, name: job.name, scheduled: Boolean(job.repeatJobKey), queue: name });
      await queue.close();
    }
  } finally {
    await connection.quit();
  }
  return out;
}

/** Until the outbox relay has handed over every event (so it changes nothing while we look). */
export async function outboxDrained(app: TestApp): Promise<void> {
  await waitFor('the outbox to drain', async () => {
    const [row] = await sql<{ n: string }>(app, 'select count(*)::text as n from domain_events where published_at is null');
    return row!.n === '0';
  });
}
