import { Queue } from 'bullmq';
import { QUEUES } from '../../../src/jobs/queues';
import { sql, testRedis, waitFor, type TestApp } from '../../helpers/test-app';

/** Runs the end of day of a date through the API and waits for it to finish; answers the run. */
export async function runEod(app: TestApp, token: string, tradingDate: string, timeoutMs = 60_000): Promise<any> {
  const started = await app.request('POST', '/api/backoffice/eod/runs', { token, body: { trading_date: tradingDate } });
  if (started.status !== 202) throw new Error(`eod run: ${started.status} ${started.text}`);
  return waitForRun(app, token, started.body.id, timeoutMs);
}

/**
 * Makes today's end of day runnable at once: the end of day refuses a date before its rollover,
 * so the rollover moves to 00:00 UTC (passed) and the accounts opened today are dated just
 * before it, so the run counts them. Answers today's date.
 */
export async function rolloverPassedToday(app: TestApp, token: string): Promise<string> {
  const res = await app.request('PATCH', '/api/admin/settings', { token, body: { rollover_time: '00:00' } });
  if (res.status !== 200) throw new Error(`settings: ${res.status} ${res.text}`);
  const today = new Date().toISOString().slice(0, 10);
  const before = new Date(Date.parse(`${today}T00:00:00.000Z`) - 1000);
  await sql(app, 'update accounts set created_at = ? where created_at >= ?', [before, before]);
  return today;
}

export async function waitForRun(app: TestApp, token: string, runId: string, timeoutMs = 60_000): Promise<any> {
  return waitFor(
    `the end-of-day run ${runId} to finish`,
    async () => {
      const res = await app.request('GET', `/api/backoffice/eod/runs/${runId}`, { token });
      return res.body.status === 'completed' || res.body.status === 'failed' ? res.body : undefined;
    },
    timeoutMs,
  );
}

/** Moves the open time of an account's orders (the fixture of a position held for some nights). */
export async function openedAt(app: TestApp, ticket: number, at: string): Promise<void> {
  await sql(app, 'update orders set created_at = ? where ticket = ?', [at, ticket]);
}

/** Swap ledger rows by order ticket. */
export async function swapRows(app: TestApp, login: number): Promise<Array<{ reference_id: string; amount: string }>> {
  return sql(
    app,
    `select l.reference_id, l.amount::text as amount from ledger_entries l join accounts a on a.id = l.account_id
      where a.login = ? and l.kind = 'swap' order by l.seq`,
    [login],
  );
}

/** The eod queue of a test app, for pausing it (a run then stays queued). */
export function eodQueue(app: TestApp): { queue: Queue; close(): Promise<void> } {
  const connection = testRedis();
  const queue = new Queue(QUEUES.eod, { connection, prefix: app.config.queuePrefix });
  return {
    queue,
    close: async () => {
      await queue.close();
      await connection.quit();
    },
  };
}

/**
 * A book written with SQL, as a rollover finds it: `accounts` live accounts of the customer in
 * the group (balance 0, no ledger rows: balanced), each holding `perAccount` EURUSD orders
 * alternating buy and sell, all opened (and the accounts created) at `since`.
 */
export async function seedBook(
  app: TestApp,
  options: { customerId: string; groupId: string; accounts: number; perAccount: number; since: string },
): Promise<void> {
  await sql(
    app,
    `insert into accounts (id, created_at, updated_at, customer_id, kind, group_id, currency, balance, reserved)
     select gen_random_uuid(), ?, now(), ?, 'live', ?, 'USD', 0, 0 from generate_series(1, ?::int)`,
    [options.since, options.customerId, options.groupId, options.accounts],
  );
  await sql(
    app,
    `insert into orders (id, created_at, updated_at, account_id, login, symbol, cmd, volume, open_price, contract_size, status)
     select gen_random_uuid(), ?, now(), a.id, a.login, 'EURUSD', (n % 2)::smallint, 0.10, 1.1, 100000, 'open'
       from accounts a cross join generate_series(1, ?::int) n where a.group_id = ?`,
    [options.since, options.perAccount, options.groupId],
  );
}
