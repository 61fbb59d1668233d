import { spawnWorkerOf, type ServiceProcess } from '../../helpers/service-process';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { CustomerTimeline, TEST_CONSUMERS } from '../../helpers/test-consumers';
import { countOf, expectHandedExactlyOnce, insertEvents, unpublishedCount } from './events-kit';

jest.setTimeout(120_000);

const EVENTS = 3000;
const BATCH = 500;
let app: TestApp;
const workers: ServiceProcess[] = [];

beforeAll(async () => {
  // The API in-process (it does not relay); the worker tier as processes the test can kill.
  app = await startTestApp({ label: 'relayfault', env: { ROLE: 'api' } });
});
afterAll(async () => {
  for (const w of workers) w.child.kill('SIGKILL');
  await app?.stop();
});

function startWorker(): ServiceProcess {
  const worker = spawnWorkerOf(
    app,
    {
      OUTBOX_RELAY_BATCH_SIZE: String(BATCH),
      OUTBOX_RELAY_INTERVAL_MS: '200',
      WORKER_CONCURRENCY: '2',
      WORKER_LOCK_MS: '2000',
    },
    { entry: 'service-with-consumers' },
  );
  workers.push(worker);
  return worker;
}

/** The server process of a relay batch that is inside its inbox insert: claimed, not yet committed. */
async function relayInsertInFlight(): Promise<number | undefined> {
  const [row] = await sql<{ pid: number }>(
    app,
    `select pid from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and state = 'active' and query like '%insert into event_inbox%'`,
  );
  return row?.pid;
}

test('when the relaying worker is SIGKILLed mid-batch, then another finishes: no event lost, none handed twice', async () => {
  await insertEvents(app, EVENTS);
  // Every inbox insert now takes a second and a half, so a batch is caught mid-way.
  await sql(
    app,
    `create function slow_inbox() returns trigger language plpgsql as $$ begin perform pg_sleep(1.5); return null; end $$`,
  );
  await sql(app, 'create trigger slow_inbox before insert on event_inbox for each statement execute function slow_inbox()');

  const first = startWorker();
  await first.waitForLog('workers started');
  // Let one batch commit, then kill the worker while the next is inside its transaction.
  await waitFor('a first batch published', async () => (await unpublishedCount(app)) <= EVENTS - BATCH, 30_000);
  const pid = await waitFor('a batch in flight', relayInsertInFlight, 30_000);
  const unpublishedAtKill = await unpublishedCount(app);
  first.child.kill('SIGKILL');
  await first.exited;
  // Postgres aborts the dead client's transaction once its statement ends.
  await waitFor(
    'the killed batch to be rolled back',
    async () => (await countOf(app, 'select count(*) as n from pg_stat_activity where pid = ?', [pid])) === 0,
    30_000,
  );

  // Batches are all or nothing: whole batches are published with their rows, the rest has none.
  const unpublished = await unpublishedCount(app);
  expect(unpublished).toBe(unpublishedAtKill);
  expect(unpublished).toBeGreaterThan(0);
  expect((EVENTS - unpublished) % BATCH).toBe(0);
  expect(
    await countOf(
      app,
      'select count(*) as n from event_inbox i join domain_events e on e.id = i.event_id where e.published_at is null',
    ),
  ).toBe(0);

  await sql(app, 'drop trigger slow_inbox on event_inbox');
  const second = startWorker();
  await second.waitForLog('workers started');
  await waitFor('every event published', async () => (await unpublishedCount(app)) === 0, 60_000);

  // 3000 events: orders (1500) go to both consumers, customers (750) to the timeline only.
  expect(await expectHandedExactlyOnce(app, TEST_CONSUMERS.consumers)).toBe(1500 * 2 + 750);
  await waitFor(
    'the timeline worker to process every row',
    async () =>
      (await countOf(app, 'select count(*) as n from event_inbox where consumer = ? and processed_at is null', [
        CustomerTimeline.name,
      ])) === 0,
    30_000,
  );

  second.child.kill('SIGTERM');
  expect(await second.exited).toBe(0);
});
