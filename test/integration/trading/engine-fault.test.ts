import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { EnginePassFailed, evaluateSymbol } from '../../../src/domain/engine/pass';
import { adminToken, createCustomer } from '../../helpers/identity';
import { spawnService, type ServiceProcess } from '../../helpers/service-process';
import { REDIS_URL, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount } from '../../helpers/trading';
import { group, restingBuyLimits, settled, usdInstrument } from './engine-kit';
import { eventsOf, expectOk } from './trading-kit';

jest.setTimeout(120_000);

let app: TestApp;
let token: string;
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  // The API in-process; the worker tier as separate processes the test can kill.
  app = await startTestApp({ label: 'engine-fault', env: { ROLE: 'api' } });
  token = await adminToken(app);
});
afterAll(async () => {
  for (const w of workers) w.child.kill('SIGKILL');
  await app?.stop();
});

function startWorker(): ServiceProcess {
  const worker = spawnService({
    ROLE: 'worker',
    WORKER_QUEUES: 'engine',
    DATABASE_URL: app.config.databaseUrl,
    REDIS_URL,
    QUEUE_PREFIX: app.config.queuePrefix,
    JWT_SECRET: randomBytes(32).toString('hex'),
    WORKER_CONCURRENCY: '4',
    // A killed worker's tick (and its lease) is taken over once its lock lapses: keep it short.
    WORKER_LOCK_MS: '2000',
  });
  workers.push(worker);
  return worker;
}

async function count(sql: string, params: unknown[] = []): Promise<number> {
  const rows = await app.runtime.services.orm.em.fork().getConnection().execute<Array<{ n: string }>>(sql, params);
  return Number(rows[0]!.n);
}

/** Every ticket filled once: one market order each, one filled event each, no stray order. */
async function expectEachFilledOnce(tickets: number[]): Promise<void> {
  const list = tickets.map(String);
  expect(await count(`select count(*) as n from pending_orders where ticket in (?) and status = 'filled'`, [list])).toBe(
    tickets.length,
  );
  expect(
    await count(`select count(distinct filled_order) as n from pending_orders where ticket in (?) and filled_order is not null`, [
      list,
    ]),
  ).toBe(tickets.length);
  expect(
    await count(`select count(*) as n from domain_events where type = 'pending_order.filled' and aggregate_id in (?)`, [list]),
  ).toBe(tickets.length);
  expect(
    await count(
      `select count(*) as n from orders o join accounts a on a.id = o.account_id where a.login in (select login from pending_orders where ticket in (?))`,
      [list],
    ),
  ).toBe(tickets.length);
}

test('when two evaluations of the same tick race (no lease between them), then every triggered order fills exactly once', async () => {
  await usdInstrument(app, token, 'GBPUSD', 1.1, 1.1002, { settle: false });
  const tickets = await restingBuyLimits(app, token, { symbol: 'GBPUSD', trigger: 1.099, accounts: 4, each: 25 });
  // Set the quote behind the engine's back and evaluate it twice at once, as two workers would.
  await app.runtime.services.quotes.set('GBPUSD', '1.0988', '1.099');
  const orm = app.runtime.services.orm;
  const [first, second] = await Promise.all([
    evaluateSymbol(orm.em.fork() as EntityManager, app.runtime.services.quotes, 'GBPUSD', {
      logger: app.runtime.services.logger,
    }),
    evaluateSymbol(orm.em.fork() as EntityManager, app.runtime.services.quotes, 'GBPUSD', {
      logger: app.runtime.services.logger,
    }),
  ]);
  expect(first.filled + second.filled).toBe(tickets.length);
  await expectEachFilledOnce(tickets);
  await expectLedgerBalanced(app);
});

test('when the worker is SIGKILLed in the middle of a tick, then two new workers finish it: no fill lost, none doubled', async () => {
  await usdInstrument(app, token, 'AUDUSD', 0.7, 0.7002, { settle: false });
  const tickets = await restingBuyLimits(app, token, { symbol: 'AUDUSD', trigger: 0.699, accounts: 6, each: 40 });
  const first = startWorker();
  await first.waitForLog('workers started');
  expectOk(await app.request('POST', '/simulator/quotes', { token, body: { symbol: 'AUDUSD', bid: 0.6988, ask: 0.699 } }), 200);
  const filled = () =>
    count(`select count(*) as n from pending_orders where ticket in (?) and status = 'filled'`, [tickets.map(String)]);
  await waitFor('some fills', async () => (await filled()) >= 20, 30_000);
  first.child.kill('SIGKILL');
  await first.exited;
  expect(await filled()).toBeLessThan(tickets.length);

  const others = [startWorker(), startWorker()];
  await Promise.all(others.map((w) => w.waitForLog('workers started')));
  await waitFor('every order filled', async () => (await filled()) === tickets.length, 60_000);
  await settled(app, 'AUDUSD', 30_000);
  await expectEachFilledOnce(tickets);
  await expectLedgerBalanced(app);
  // The tests below drive the engine by hand: no worker of this one may evaluate beside them.
  for (const w of others) w.child.kill('SIGKILL');
  await Promise.all(others.map((w) => w.exited));
});

test('when one candidate of a pass fails, then the other candidates and the margin stage still run, and the pass throws only once they are done', async () => {
  await usdInstrument(app, token, 'EURUSD', 1.1, 1.1002, { settle: false });
  const tickets = await restingBuyLimits(app, token, { symbol: 'EURUSD', trigger: 1.099, accounts: 2, each: 20 });
  // An account the next quote stops out: 0.8 lots bought at 1.1002 with 1,000 (880.16 of margin).
  const customer = await createCustomer(app, token);
  const holder = await fundedAccount(
    app,
    token,
    customer.id,
    await group(app, token, { margin_call_level: 100, stopout_level: 50 }),
    1000,
  );
  const position = expectOk(
    await app.request('POST', '/orders', { token, body: { login: holder, symbol: 'EURUSD', cmd: 0, volume: 0.8 } }),
    201,
  ).order as number;
  // The first candidate's fill fails in the database (its comment breaks a check added for the test).
  const [poisoned, ...others] = tickets;
  const connection = app.runtime.services.orm.em.fork().getConnection();
  await connection.execute(
    `alter table orders add constraint engine_fault_check check (comment is distinct from 'engine-fault-poisoned') not valid`,
  );
  await connection.execute(`update pending_orders set comment = 'engine-fault-poisoned' where ticket = ?`, [poisoned]);
  try {
    await app.runtime.services.quotes.set('EURUSD', '1.088', '1.0882');
    const pass = evaluateSymbol(app.runtime.services.orm.em.fork() as EntityManager, app.runtime.services.quotes, 'EURUSD', {
      logger: app.runtime.services.logger,
    });
    const failure = await pass.then(
      () => undefined,
      (err: unknown) => err,
    );
    // Read the moment the pass threw: every other lane had finished, and the stop-out was done.
    expect(
      await count(`select count(*) as n from pending_orders where ticket in (?) and status = 'filled'`, [others.map(String)]),
    ).toBe(others.length);
    expect(await count(`select count(*) as n from orders where ticket = ? and close_reason = 'stop_out'`, [position])).toBe(1);
    expect(await eventsOf(app, 'account.stop_out', holder)).toHaveLength(1);
    expect(await count(`select count(*) as n from pending_orders where ticket = ? and status = 'pending'`, [poisoned])).toBe(1);
    // It threw for the retry, counted the failure and logged it, without the value that failed.
    expect(failure).toBeInstanceOf(EnginePassFailed);
    expect((failure as EnginePassFailed).outcome).toMatchObject({ filled: others.length, failed: 1, stoppedOut: 1 });
    expect((failure as Error).message).not.toContain('engine-fault-poisoned');
    expect(
      app.logs.some(
        (l) => l.msg === 'engine step failed; the pass will throw once the rest is done' && l.ticket === String(poisoned),
      ),
    ).toBe(true);
  } finally {
    await connection.execute(`alter table orders drop constraint engine_fault_check`);
  }
  // The retry fills what failed, and nothing twice.
  await evaluateSymbol(app.runtime.services.orm.em.fork() as EntityManager, app.runtime.services.quotes, 'EURUSD', {
    logger: app.runtime.services.logger,
  });
  await expectEachFilledOnce(tickets);
  await expectLedgerBalanced(app);
});
