import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { failChallenge } from '../../../src/domain/prop/challenge-decisions';
import { adminToken, createCustomer } from '../../helpers/identity';
import { spawnService, type ServiceProcess } from '../../helpers/service-process';
import { REDIS_URL, sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, setQuote, setUpMarket, type Market } from '../../helpers/trading';
import { expectOk } from '../trading/trading-kit';

/**
 * Prop challenges decided by the worker tier as separate processes: two of them seeing one
 * breach fail it once, and a worker SIGKILLed mid-breach leaves no order open on a failed
 * challenge once its jobs are taken over.
 */
jest.setTimeout(180_000);

let app: TestApp;
let admin: string;
let market: Market;
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  app = await startTestApp({ label: 'prop-fault', env: { ROLE: 'api' } });
  admin = await adminToken(app);
  market = await setUpMarket(app, admin, { gbp: true });
});
afterAll(async () => {
  for (const w of workers) w.child.kill('SIGKILL');
  await app?.stop();
});

function startWorker(): ServiceProcess {
  const worker = spawnService({
    ROLE: 'worker',
    DATABASE_URL: app.config.databaseUrl,
    REDIS_URL,
    QUEUE_PREFIX: app.config.queuePrefix,
    JWT_SECRET: randomBytes(32).toString('hex'),
    WORKER_CONCURRENCY: '4',
    // A killed worker's jobs are taken over once their lock lapses: keep it short.
    WORKER_LOCK_MS: '2000',
  });
  workers.push(worker);
  return worker;
}

async function program(): Promise<string> {
  return expectOk(
    await app.request('POST', '/prop/programs', {
      token: admin,
      body: {
        name: `Fault ${randomBytes(3).toString('hex')}`,
        currency: 'USD',
        initial_balance: 10000,
        group_id: market.groupId,
        profit_split_pct: 80,
        phases: [
          {
            name: 'Evaluation',
            profit_target_pct: 10,
            max_daily_loss_pct: 5,
            max_total_loss_pct: 10,
            total_loss_mode: 'static',
            min_trading_days: 0,
          },
        ],
      },
    }),
    201,
  ).id;
}

/** `n` challenges, each holding one lot of EURUSD and one of GBPUSD, set up four at a time (no worker runs yet). */
async function challengesHoldingBoth(n: number): Promise<Array<{ id: string; login: number }>> {
  const programId = await program();
  const one = async (): Promise<{ id: string; login: number }> => {
    const customer = await createCustomer(app, admin);
    const view = expectOk(
      await app.request('POST', '/prop/challenges', { token: admin, body: { program_id: programId, customer_id: customer.id } }),
      201,
    );
    for (const symbol of ['EURUSD', 'GBPUSD'])
      expectOk(
        await app.request('POST', '/orders', { token: customer.token, body: { login: view.login, symbol, cmd: 0, volume: 1 } }),
        201,
      );
    return { id: view.id, login: view.login };
  };
  const out: Array<{ id: string; login: number }> = [];
  for (let i = 0; i < n; i += 4) out.push(...(await Promise.all(Array.from({ length: Math.min(4, n - i) }, one))));
  return out;
}

async function statusCounts(ids: string[]): Promise<Record<string, number>> {
  const rows = await sql<{ status: string; n: string }>(
    app,
    'select status, count(*) as n from prop_challenges where id in (?) group by status',
    [ids],
  );
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

/** Orders still open on failed challenges' accounts. */
async function openOnFailed(ids: string[]): Promise<number> {
  const rows = await sql<{ n: string }>(
    app,
    `select count(*) as n from orders o join prop_challenges c on c.account_id = o.account_id
      where c.id in (?) and c.status = 'failed' and o.status = 'open'`,
    [ids],
  );
  return Number(rows[0]!.n);
}

/** Every challenge failed once (one event), every order closed once (one ledger row), all by prop_breach. */
async function expectEachFailedOnce(ids: string[]): Promise<void> {
  expect(await statusCounts(ids)).toEqual({ failed: ids.length });
  const events = await sql<{ aggregate_id: string; n: string }>(
    app,
    `select aggregate_id, count(*) as n from domain_events where type = 'prop.challenge_failed' and aggregate_id in (?)
      group by aggregate_id`,
    [ids],
  );
  expect(events.length).toBe(ids.length);
  expect(events.every((e) => Number(e.n) === 1)).toBe(true);
  const orders = await sql<{ close_reason: string; rows: string }>(
    app,
    `select o.close_reason, (select count(*) from ledger_entries l where l.reference_type = 'order'
            and l.reference_id = o.ticket::text and l.kind = 'trade_profit') as rows
       from orders o join prop_challenges c on c.account_id = o.account_id where c.id in (?)`,
    [ids],
  );
  expect(orders.length).toBe(ids.length * 2);
  expect(orders.every((o) => o.close_reason === 'prop_breach' && Number(o.rows) === 1)).toBe(true);
  await expectLedgerBalanced(app);
}

test('when two worker processes see the same breaches (one through each symbol), then each challenge fails once and each order closes once', async () => {
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
  await setQuote(app, admin, 'GBPUSD', 1.25, 1.2503);
  const challenges = await challengesHoldingBoth(12);
  const ids = challenges.map((c) => c.id);
  const pair = [startWorker(), startWorker()];
  await Promise.all(pair.map((w) => w.waitForLog('workers started')));
  // Both symbols fall at once: one worker evaluates EURUSD's tick while the other evaluates
  // GBPUSD's, and each finds every challenge breached (-1000 - 1000 < -500).
  await Promise.all([setQuote(app, admin, 'EURUSD', 1.0902, 1.0904), setQuote(app, admin, 'GBPUSD', 1.2403, 1.2406)]);
  await waitFor(
    'every challenge failed and closed out',
    async () => {
      const counts = await statusCounts(ids);
      return counts.failed === ids.length && (await openOnFailed(ids)) === 0;
    },
    60_000,
  );
  await expectEachFailedOnce(ids);
  for (const w of pair) w.child.kill('SIGKILL');
  await Promise.all(pair.map((w) => w.exited));
});

test('when a worker is SIGKILLed mid-breach, then once its jobs are retried no order is open on any failed challenge', async () => {
  await setQuote(app, admin, 'EURUSD', 1.1, 1.1002);
  await setQuote(app, admin, 'GBPUSD', 1.25, 1.2503);
  const challenges = await challengesHoldingBoth(30);
  const ids = challenges.map((c) => c.id);
  // A failure committed by a worker that died before it could queue the close-out.
  const orphan = challenges.pop()!;
  const [{ account_id: orphanAccount }] = await sql<{ account_id: string }>(
    app,
    'select account_id from prop_challenges where id = ?',
    [orphan.id],
  );
  const failure = {
    rule: 'daily_loss' as const,
    threshold: '9500.00',
    equity: '9400.00',
    balance: '10000.00',
    at: new Date().toISOString(),
  };
  expect(await failChallenge(app.runtime.services.orm.em.fork() as EntityManager, orphan.id, orphanAccount!, failure)).toBe(true);

  const first = startWorker();
  await first.waitForLog('workers started');
  await setQuote(app, admin, 'EURUSD', 1.0902, 1.0904);
  // Killed as soon as the first failure is recorded: the rest of the pass, the close-outs it
  // queued and the ones it had not queued yet are left to the next worker.
  await waitFor('a first failure', async () => ((await statusCounts(ids)).failed ?? 0) > 1, 60_000);
  first.child.kill('SIGKILL');
  await first.exited;
  const second = startWorker();
  await second.waitForLog('workers started');
  await waitFor(
    'every challenge failed and closed out',
    async () => {
      const counts = await statusCounts(ids);
      return counts.failed === ids.length && (await openOnFailed(ids)) === 0;
    },
    90_000,
  );
  const closedOut = await sql<{ n: string }>(
    app,
    'select count(*) as n from prop_challenges where id in (?) and closed_out_at is not null',
    [ids],
  );
  await waitFor(
    'every close-out recorded',
    async () => {
      const rows = await sql<{ n: string }>(
        app,
        'select count(*) as n from prop_challenges where id in (?) and closed_out_at is not null',
        [ids],
      );
      return Number(rows[0]!.n) === ids.length;
    },
    30_000,
  );
  expect(Number(closedOut[0]!.n)).toBeGreaterThan(0);
  await expectEachFailedOnce(ids);
  second.child.kill('SIGKILL');
});
