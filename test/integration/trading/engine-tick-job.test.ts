import type { EntityManager } from '@mikro-orm/postgresql';
import { evaluateSymbol } from '../../../src/domain/engine/pass';
import { TickBook } from '../../../src/domain/engine/tick-book';
import { EngineTickJob } from '../../../src/jobs/engine-tick.job';
import type { JobContext } from '../../../src/workers/processor';
import { MAX_PASSES_PER_JOB, type TickJobResult } from '../../../src/domain/engine/tick-runner';
import { engineTickProcessor } from '../../../src/workers/engine-tick.worker';
import { adminToken, createCustomer } from '../../helpers/identity';
import { startTestApp, type TestApp } from '../../helpers/test-app';
import { expectLedgerBalanced, fundedAccount } from '../../helpers/trading';
import { group, restingBuyLimits, settled, usdInstrument } from './engine-kit';
import { expectOk, sql } from './trading-kit';

jest.setTimeout(90_000);

// The API alone: no worker takes engine jobs unless a test starts one, so the tests drive the engine by hand.
let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp({ label: 'engine-tick-job', env: { ROLE: 'api' } });
  token = await adminToken(app);
});
afterAll(() => app?.stop());

/** The context a worker gives the processor, around a fresh unit of work. */
function jobContext(): JobContext {
  const services = app.runtime.services;
  return {
    job: { attemptsMade: 0, opts: { attempts: EngineTickJob.options.attempts } },
    em: services.orm.em.fork(),
    services,
    logger: services.logger,
    isLastAttempt: false,
  } as unknown as JobContext;
}

async function waitingTicks(symbol: string): Promise<number> {
  const jobs = await app.runtime.services.jobs.queue('engine').getJobs(['waiting', 'prioritized', 'delayed']);
  return jobs.filter((j) => j.name === EngineTickJob.name && j.data.symbol === symbol).length;
}

test('when quote changes keep arriving faster than a pass, then a tick job stops at its bound, hands the symbol on to a queued tick, and no change is lost', async () => {
  await usdInstrument(app, token, 'NZDUSD', 0.6, 0.6002, { settle: false });
  // Eight accounts holding the symbol once filled: each pass reads the margin of every one.
  const tickets = (await restingBuyLimits(app, token, { symbol: 'NZDUSD', trigger: 0.599, accounts: 8, each: 5 })).map(String);
  const quotes = app.runtime.services.quotes;
  const before = await waitingTicks('NZDUSD');

  // Steady ticks for up to 20 s, every one of them reaching the buy limits.
  let stop = false;
  let tickerDone = false;
  const ticker = (async () => {
    const deadline = Date.now() + 20_000;
    for (let i = 0; !stop && Date.now() < deadline; i++) {
      const bid = i % 2 ? '0.5987' : '0.5988';
      await quotes.set('NZDUSD', bid, i % 2 ? '0.5989' : '0.599');
      await new Promise((r) => setTimeout(r, 1));
    }
    tickerDone = true;
  })();
  let result: TickJobResult;
  const startedAt = Date.now();
  try {
    result = (await engineTickProcessor.handle({ symbol: 'NZDUSD' }, jobContext())) as TickJobResult;
    // Returned while the ticks went on: the job did not wait for a quiet moment that never came.
    expect(tickerDone).toBe(false);
  } finally {
    stop = true;
    await ticker;
  }
  expect(Date.now() - startedAt).toBeLessThan(app.config.workerLockMs);
  expect(result).toMatchObject({ symbol: 'NZDUSD', coalesced: false, handedOn: true });
  expect(result.passes).toBeGreaterThan(0);
  expect(result.passes).toBeLessThanOrEqual(MAX_PASSES_PER_JOB);
  expect(result.totals).toMatchObject({ filled: tickets.length, failed: 0 });
  // The lease is free for the next job, and the symbol's next job is queued.
  expect(await app.runtime.services.redis.get(`${app.config.queuePrefix}:engine:lock:NZDUSD`)).toBeNull();
  expect(await waitingTicks('NZDUSD')).toBe(before + 1);
  const book = new TickBook(app.runtime.services.redis, app.config.queuePrefix);
  const state = await book.state('NZDUSD');
  expect(state.ver).toBeGreaterThan(state.done);

  // A worker takes the queued ticks: the changes left behind are evaluated, nothing is filled twice.
  const worker = await startTestApp({ shareWith: app, env: { ROLE: 'worker', WORKER_QUEUES: 'engine' } });
  try {
    await settled(app, 'NZDUSD', 30_000);
  } finally {
    await worker.stop();
  }
  const [filled] = await sql<{ n: string; orders: string }>(
    app,
    `select count(*) as n, count(distinct filled_order) as orders from pending_orders where ticket in (?) and status = 'filled'`,
    [tickets],
  );
  expect(filled).toEqual({ n: String(tickets.length), orders: String(tickets.length) });
  const [events] = await sql<{ n: string }>(
    app,
    `select count(*) as n from domain_events where type = 'pending_order.filled' and aggregate_id in (?)`,
    [tickets],
  );
  expect(Number(events!.n)).toBe(tickets.length);
  await expectLedgerBalanced(app);
});

test('when a pass reads the margin of the accounts holding the symbol, then it heartbeats the lease as it goes', async () => {
  await usdInstrument(app, token, 'SEKUSD', 1.1, 1.1002, { settle: false });
  const groupId = await group(app, token);
  const customer = await createCustomer(app, token);
  for (let i = 0; i < 3; i++) {
    const login = await fundedAccount(app, token, customer.id, groupId, 10_000);
    expectOk(await app.request('POST', '/orders', { token, body: { login, symbol: 'SEKUSD', cmd: 0, volume: 0.1 } }), 201);
  }
  // No stop, trailing stop or pending order on the symbol: the margin stage is the whole pass.
  let beats = 0;
  const outcome = await evaluateSymbol(
    app.runtime.services.orm.em.fork() as EntityManager,
    app.runtime.services.quotes,
    'SEKUSD',
    {
      logger: app.runtime.services.logger,
      heartbeat: async () => {
        beats++;
      },
    },
  );
  expect(outcome).toMatchObject({ trailed: 0, filled: 0, marginCalls: 0, stoppedOut: 0, failed: 0 });
  expect(beats).toBeGreaterThanOrEqual(3);
});
