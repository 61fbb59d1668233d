import { randomBytes } from 'node:crypto';
import { adminToken, createCustomer } from '../helpers/identity';
import { startPrivateRedis, type PrivateRedis } from '../helpers/redis-server';
import { spawnWorkerOf, type ServiceProcess } from '../helpers/service-process';
import { sql, startTestApp, waitFor, type TestApp } from '../helpers/test-app';
import { withAdmin } from '../helpers/test-database';
import { expectLedgerBalanced, fundedAccount, openOrder, setUpMarket } from '../helpers/trading';
import { completedBulkClose } from './trading/trading-kit';

jest.setTimeout(180_000);

/** Operations under faults: what a deployment does when Redis or Postgres goes away, or a worker is told to stop. */

async function closedItems(app: TestApp, runId: string): Promise<number> {
  const [row] = await sql<{ n: number }>(
    app,
    "select count(*)::int as n from bulk_close_items where run_id = ? and status = 'closed'",
    [runId],
  );
  return row!.n;
}

async function expectEachTicketBookedOnce(app: TestApp, login: number, tickets: number): Promise<void> {
  const bookings = await sql<{ n: number }>(
    app,
    `select count(*)::int as n from ledger_entries l join orders o on l.reference_type = 'order' and l.reference_id = o.ticket::text
      where o.login = ? and l.kind = 'trade_profit' group by o.ticket`,
    [login],
  );
  expect(bookings).toHaveLength(tickets);
  expect(bookings.every((b) => b.n === 1)).toBe(true);
  await expectLedgerBalanced(app);
}

async function accountWithOrders(app: TestApp, token: string, n: number): Promise<number> {
  const market = await setUpMarket(app, token);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, market.groupId, 1_000_000);
  for (let i = 0; i < n; i++) await openOrder(app, token, login, i % 2 === 0 ? 0 : 1, 0.01);
  return login;
}

describe('Redis restarted while the API and the workers run', () => {
  let redis: PrivateRedis;
  let app: TestApp;
  beforeAll(async () => {
    redis = await startPrivateRedis();
    app = await startTestApp({
      label: 'fault-redis',
      env: { REDIS_URL: redis.url, BULK_CLOSE_WAIT_MS: '1', WORKER_CONCURRENCY: '1', WORKER_LOCK_MS: '3000' },
    });
  });
  afterAll(async () => {
    await app?.stop();
    await redis?.close();
  });

  test('when Redis dies, then queue routes answer 503 at once and others keep working; when it returns, everything recovers and no acknowledged job is lost', async () => {
    const token = await adminToken(app);
    const login = await accountWithOrders(app, token, 40);
    const other = await accountWithOrders(app, token, 2);

    const accepted = await app.request('POST', '/orders/bulk-close', { token, body: { login } });
    expect(accepted.status).toBe(202);
    await redis.stop('SIGKILL');

    const started = Date.now();
    const refused = await app.request('POST', '/orders/bulk-close', { token, body: { login: other } });
    expect(refused.status).toBe(503);
    expect(refused.body.code).toBe('QUEUE_UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(3000);
    // Authentication falls back to Postgres; reads that need no Redis still answer.
    expect((await app.request('GET', '/groups', { token })).status).toBe(200);
    // A login needs its throttle, which lives in Redis: refused with 503, never let through unthrottled.
    const login503 = await app.request('POST', '/api/admin/users/login', {
      body: { email: 'x@broker.test', password: 'whatever-pass' },
    });
    expect(login503.status).toBe(503);

    await redis.start();
    const back = Date.now();
    await waitFor(
      'queue routes to work again',
      async () => {
        const res = await app.request('POST', '/orders/bulk-close', { token, body: { login: other } });
        expect([200, 202, 503]).toContain(res.status);
        return res.status !== 503;
      },
      15_000,
    );
    expect(Date.now() - back).toBeLessThan(15_000);

    // The run acknowledged before the outage completes: its jobs were in Redis's append-only file.
    const result = await waitFor(
      'the acknowledged run to complete',
      async () => {
        const res = await app.request('GET', `/orders/bulk-close/${accepted.body.id}`, { token });
        return res.body.status === 'completed' ? res.body : undefined;
      },
      90_000,
    );
    expect(result.failed).toEqual([]);
    expect(result.closed).toHaveLength(40);
    await expectEachTicketBookedOnce(app, login, 40);
  });
});

describe('PostgreSQL connections killed under load', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ label: 'fault-pg' });
  });
  afterAll(() => app?.stop());

  test('when every connection of the service is terminated mid-load, then only requests in flight fail (503, never 500) and the service recovers', async () => {
    const token = await adminToken(app);
    const login = await accountWithOrders(app, token, 2);
    const CONCURRENCY = 8;
    const results: Array<{ at: number; status: number; code?: string }> = [];
    let killedAt = Infinity;
    const until = Date.now() + 5000;
    const loop = async () => {
      while (Date.now() < until) {
        const res = await app.request('GET', `/api/crm/accounts/${login}`, { token });
        results.push({ at: Date.now(), status: res.status, code: res.body?.code });
      }
    };
    const load = Promise.all(Array.from({ length: CONCURRENCY }, loop));
    // Kill once the load is running: every client has been answered a few times.
    await waitFor('the load to be running', async () => results.filter((r) => r.status === 200).length >= CONCURRENCY * 4);
    const killed = await withAdmin((client) =>
      client.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [
        app.databaseName,
      ]),
    );
    killedAt = Date.now();
    await load;

    expect(killed.rowCount).toBeGreaterThan(0);
    if (process.env.FAULT_STATS)
      console.log(
        JSON.stringify({
          requests: results.length,
          failed: results.filter((r) => r.status !== 200).length,
          killed: killed.rowCount,
        }),
      );
    expect(results.filter((r) => r.status === 500)).toEqual([]);
    const failed = results.filter((r) => r.status !== 200);
    for (const f of failed) expect(f).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
    // Only what was in flight (or picked a dying connection at that instant) fails...
    expect(failed.length).toBeLessThanOrEqual(CONCURRENCY * 2);
    // ...and a second after the kill every request succeeds again.
    expect(results.filter((r) => r.at > killedAt + 1000 && r.status !== 200)).toEqual([]);
    expect(results.filter((r) => r.at > killedAt + 1000).length).toBeGreaterThan(10);
  });
});

describe('SIGTERM during a bulk close', () => {
  let app: TestApp;
  const workers: ServiceProcess[] = [];
  beforeAll(async () => {
    app = await startTestApp({ label: 'fault-sigterm', env: { ROLE: 'api', BULK_CLOSE_WAIT_MS: '1' } });
  });
  afterAll(async () => {
    for (const w of workers) w.child.kill('SIGKILL');
    await app?.stop();
  });

  function startWorker(): ServiceProcess {
    const worker = spawnWorkerOf(app, { WORKER_CONCURRENCY: '2', WORKER_LOCK_MS: '2000' });
    workers.push(worker);
    return worker;
  }

  test('when the worker is told to stop mid-run, then it finishes its jobs and exits 0, and the run completes after a restart', async () => {
    const token = await adminToken(app);
    const TICKETS = 120;
    const login = await accountWithOrders(app, token, TICKETS);
    const first = startWorker();
    await first.waitForLog('workers started');
    const started = await app.request('POST', '/orders/bulk-close', {
      token,
      body: { login, comment: `sigterm ${randomBytes(2).toString('hex')}` },
    });
    expect(started.status).toBe(202);
    await waitFor('the run to be under way', async () => (await closedItems(app, started.body.id)) >= 10, 30_000);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.logs.map((l) => l.msg)).toContain('shutdown complete');
    expect(await closedItems(app, started.body.id)).toBeLessThan(TICKETS);

    const second = startWorker();
    await second.waitForLog('workers started');
    const result = await completedBulkClose(app, token, started.body.id, 90_000);
    expect(result.failed).toEqual([]);
    expect(result.closed).toHaveLength(TICKETS);
    await expectEachTicketBookedOnce(app, login, TICKETS);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
