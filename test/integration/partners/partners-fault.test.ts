import { randomBytes } from 'node:crypto';
import { adminToken } from '../../helpers/identity';
import { spawnWorkerOf, type ServiceProcess } from '../../helpers/service-process';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount, setUpMarket } from '../../helpers/trading';
import { rolloverPassedToday, waitForRun } from '../eod/eod-kit';
import { expectOk } from '../trading/trading-kit';
import { plan } from './partners-kit';

jest.setTimeout(180_000);

/**
 * The end of day's daily partner payment killed half-way: each partner is paid in its own
 * transaction, so a SIGKILL leaves some paid and the rest owed, and the run's retry on another
 * worker pays the rest, nobody twice.
 */
const PARTNERS = 120;
const ACCRUALS_EACH = 3;
let app: TestApp;
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  // The API in-process; the worker tier as separate processes that the test can kill.
  app = await startTestApp({ label: 'ibfault', env: { ROLE: 'api' } });
});
afterAll(async () => {
  for (const w of workers) w.child.kill('SIGKILL');
  await app?.stop();
});

function startWorker(): ServiceProcess {
  // A killed worker's jobs are taken over once their lock lapses: keep that short here.
  const worker = spawnWorkerOf(app, { WORKER_LOCK_MS: '2000', EOD_STEP_BATCH_SIZE: '4' });
  workers.push(worker);
  return worker;
}

/** A partner without logging its customer in: only its wallet is paid here. */
async function partnerOf(token: string, planId: string): Promise<{ id: string; customerId: string }> {
  const customer = expectOk(
    await app.request('POST', '/api/crm/customers', {
      token,
      body: {
        email: `ib-${randomBytes(6).toString('hex')}@fault.test`,
        password: 'partner-password-1',
        first_name: 'P',
        last_name: 'Q',
      },
    }),
    201,
    'customer',
  );
  const made = expectOk(
    await app.request('POST', '/api/crm/partners', { token, body: { customer_id: customer.id, plan_id: planId } }),
    201,
  );
  return { id: made.id as string, customerId: customer.id as string };
}

async function paymentsCount(): Promise<number> {
  const [row] = await sql<{ n: number }>(app, 'select count(*)::int as n from ib_payments');
  return row!.n;
}

test('when the worker is SIGKILLed during the daily partner payment, then a retry pays the rest and every partner exactly once', async () => {
  const token = await adminToken(app);
  const planId = await plan(app, token);
  // One trading account, so the run closes accounts first and pays in its finishing job.
  const { groupId } = await setUpMarket(app, token);
  const partners: Array<{ id: string; customerId: string }> = [];
  while (partners.length < PARTNERS)
    partners.push(...(await Promise.all(Array.from({ length: 10 }, () => partnerOf(token, planId)))));
  await fundedAccount(app, token, partners[0]!.customerId, groupId);
  // Accruals of closed orders, as the close's hook leaves them (tickets made up: the payment
  // reads the accruals alone).
  await sql(
    app,
    `insert into ib_accruals (id, created_at, updated_at, ticket, partner_id, level, plan_id, client_customer_id, login,
                              symbol, lots, amount, currency, status, charge, closed_at)
     select gen_random_uuid(), now(), now(), 9000000 + p.n * 10 + k, p.id, 1, ?::uuid, p.customer_id, 0,
            'EURUSD', 1, 1.25, 'USD', 'accrued', 'daily', now() - interval '1 hour'
       from (select id, customer_id, row_number() over (order by id) as n from partners) p, generate_series(1, ?::int) k`,
    [planId, ACCRUALS_EACH],
  );
  const today = await rolloverPassedToday(app, token);

  const first = startWorker();
  await first.waitForLog('workers started');
  const started = await app.request('POST', '/api/backoffice/eod/runs', { token, body: { trading_date: today } });
  expect(started.status).toBe(202);
  await waitFor('some partners paid', async () => (await paymentsCount()) >= 5, 60_000);
  first.child.kill('SIGKILL');
  await first.exited;
  expect(await paymentsCount()).toBeLessThan(PARTNERS);

  const second = startWorker();
  await second.waitForLog('workers started');
  const run = await waitForRun(app, token, started.body.id, 120_000);
  expect(run).toMatchObject({ status: 'completed', accounts_total: 1, accounts_done: 1 });

  const paid = await sql<{ customer_id: string; n: number; total: string }>(
    app,
    `select a.customer_id::text as customer_id, count(*)::int as n, sum(l.amount)::text as total
       from ledger_entries l join accounts a on a.id = l.account_id
      where l.kind = 'ib_reward' group by a.customer_id`,
  );
  expect(paid).toHaveLength(PARTNERS);
  expect(paid.every((p) => p.n === 1 && p.total === '3.75')).toBe(true);
  expect(new Set(paid.map((p) => p.customer_id))).toEqual(new Set(partners.map((p) => p.customerId)));
  expect(await paymentsCount()).toBe(PARTNERS);
  const [owed] = await sql<{ n: number }>(app, `select count(*)::int as n from ib_accruals where status <> 'paid'`);
  expect(owed!.n).toBe(0);
  await expectLedgerBalanced(app);
  second.child.kill('SIGTERM');
  expect(await second.exited).toBe(0);
});
