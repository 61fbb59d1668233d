import { adminToken, createCustomer } from '../../helpers/identity';
import { spawnWorkerOf, type ServiceProcess } from '../../helpers/service-process';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, setUpMarket } from '../../helpers/trading';
import { eodQueue, seedBook, waitForRun } from './eod-kit';

jest.setTimeout(180_000);

const ACCOUNTS = 400;
const PER_ACCOUNT = 2;
let app: TestApp;
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  // The API in-process; the eod pool as separate processes that the test can kill.
  app = await startTestApp({ label: 'eodfault', env: { ROLE: 'api' } });
});
afterAll(async () => {
  for (const w of workers) w.child.kill('SIGKILL');
  await app?.stop();
});

function startWorker(): ServiceProcess {
  const worker = spawnWorkerOf(app, {
    WORKER_QUEUES: 'eod',
    WORKER_CONCURRENCY: '1',
    // A killed worker's jobs are taken over once their lock lapses: keep that short here.
    WORKER_LOCK_MS: '2000',
  });
  workers.push(worker);
  return worker;
}

const count = async (query: string, params: unknown[] = []) => (await sql<{ n: number }>(app, query, params))[0]!.n;

test('when the eod worker is SIGKILLed mid-run, then another finishes the run and no order is booked twice', async () => {
  const token = await adminToken(app);
  const { groupId } = await setUpMarket(app, token);
  const row = await app.request('PUT', `/groups/${groupId}/instruments/EURUSD`, {
    token,
    body: { enabled: true, spread: 0, swap_long: -3, swap_short: 1 },
  });
  expect(row.status).toBe(201);
  const customer = await createCustomer(app, token);
  await seedBook(app, {
    customerId: customer.id,
    groupId,
    accounts: ACCOUNTS,
    perAccount: PER_ACCOUNT,
    since: '2026-11-10T10:00:00Z',
  });

  const first = startWorker();
  await first.waitForLog('rollover scheduled');
  // Every worker process of the pool upserts the same scheduler: one schedule in the deployment.
  const { queue, close } = eodQueue(app);
  expect((await queue.getJobSchedulers()).map((s) => s.key)).toEqual(['eod-rollover']);
  await close();

  const started = await app.request('POST', '/api/backoffice/eod/runs', { token, body: { trading_date: '2026-11-24' } });
  expect(started.status).toBe(202);
  const runId: string = started.body.id;
  await waitFor(
    'some accounts done',
    async () =>
      (await count("select count(*)::int as n from eod_run_accounts where run_id = ? and status = 'done'", [runId])) >= 30,
    60_000,
  );
  first.child.kill('SIGKILL');
  await first.exited;
  const doneAtKill = await count("select count(*)::int as n from eod_run_accounts where run_id = ? and status = 'done'", [runId]);
  expect(doneAtKill).toBeLessThan(ACCOUNTS);
  const progress = await app.request('GET', `/api/backoffice/eod/runs/${runId}`, { token });
  expect(progress.body).toMatchObject({ status: 'running', accounts_total: ACCOUNTS });
  expect(progress.body.accounts_done).toBeGreaterThanOrEqual(doneAtKill);

  const second = startWorker();
  await second.waitForLog('workers started');
  const run = await waitForRun(app, token, runId, 120_000);
  expect(run).toMatchObject({
    status: 'completed',
    accounts_total: ACCOUNTS,
    accounts_done: ACCOUNTS,
    accounts_failed: 0,
    swaps_booked: ACCOUNTS * PER_ACCOUNT,
    snapshots_written: ACCOUNTS,
  });
  // Exactly one swap row per order, however many times its job ran.
  const perOrder = await sql<{ n: number }>(
    app,
    "select count(*)::int as n from ledger_entries where kind = 'swap' group by reference_id",
  );
  expect(perOrder).toHaveLength(ACCOUNTS * PER_ACCOUNT);
  expect(perOrder.every((r) => r.n === 1)).toBe(true);
  expect(await count("select count(*)::int as n from account_daily_snapshots where trading_date = '2026-11-24'")).toBe(ACCOUNTS);
  await expectLedgerBalanced(app);

  second.child.kill('SIGTERM');
  expect(await second.exited).toBe(0);
});
