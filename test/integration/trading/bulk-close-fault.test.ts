import { adminToken, createCustomer } from '../../helpers/identity';
import { spawnWorkerOf, type ServiceProcess } from '../../helpers/service-process';
import { startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, openOrder, setUpMarket } from '../../helpers/trading';
import { completedBulkClose } from './trading-kit';

jest.setTimeout(120_000);

const TICKETS = 200;
let app: TestApp;
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  // The API in-process; the worker tier as separate processes that the test can kill.
  app = await startTestApp({ label: 'bulkfault', env: { ROLE: 'api', BULK_CLOSE_WAIT_MS: '1' } });
});
afterAll(async () => {
  for (const w of workers) w.child.kill('SIGKILL');
  await app?.stop();
});

function startWorker(): ServiceProcess {
  const worker = spawnWorkerOf(app, {
    WORKER_CONCURRENCY: '4',
    // A killed worker's jobs are taken over once their lock lapses: keep that short here.
    WORKER_LOCK_MS: '2000',
  });
  workers.push(worker);
  return worker;
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const rows = await app.runtime.services.orm.em.fork().getConnection().execute<Array<{ n: string }>>(sql, params);
  return Number(rows[0]!.n);
}

test('when the worker is SIGKILLed in the middle of a bulk close, then another finishes it and every ticket closes exactly once', async () => {
  const token = await adminToken(app);
  const market = await setUpMarket(app, token);
  const customer = await createCustomer(app, token);
  const login = await fundedAccount(app, token, customer.id, market.groupId, 1_000_000);
  const tickets: number[] = [];
  for (let i = 0; i < TICKETS; i++) tickets.push(await openOrder(app, token, login, i % 2 === 0 ? 0 : 1, 0.01));

  const first = startWorker();
  await first.waitForLog('workers started');
  const started = await app.request('POST', '/orders/bulk-close', { token, body: { login, comment: 'fault test' } });
  expect(started.status).toBe(202);
  const runId: string = started.body.id;

  // Kill it once it is well under way, but far from done.
  await waitFor(
    'some tickets closed',
    async () => (await count("select count(*) as n from bulk_close_items where run_id = ? and status = 'closed'", [runId])) >= 20,
    30_000,
  );
  first.child.kill('SIGKILL');
  await first.exited;
  const closedAtKill = await count("select count(*) as n from bulk_close_items where run_id = ? and status = 'closed'", [runId]);
  expect(closedAtKill).toBeLessThan(TICKETS);

  const second = startWorker();
  await second.waitForLog('workers started');
  const result = await completedBulkClose(app, token, runId, 60_000);

  expect(result.failed).toEqual([]);
  expect([...result.closed].sort((a: number, b: number) => a - b)).toEqual(tickets);
  expect(await count("select count(*) as n from orders where login = ? and status = 'open'", [login])).toBe(0);
  // Exactly one profit booking per ticket, however many times its job ran.
  const bookings = await app.runtime.services.orm.em
    .fork()
    .getConnection()
    .execute<Array<{ reference_id: string; n: string }>>(
      "select reference_id, count(*) as n from ledger_entries where kind = 'trade_profit' group by reference_id",
    );
  expect(bookings).toHaveLength(TICKETS);
  expect(bookings.every((b) => Number(b.n) === 1)).toBe(true);
  await expectLedgerBalanced(app);
  second.child.kill('SIGTERM');
  expect(await second.exited).toBe(0);
});
