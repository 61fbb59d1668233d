import type { EntityManager } from '@mikro-orm/postgresql';
import { ConsumerRegistryError, checkConsumers, defineConsumer } from '../../../src/domain/events/consumers';
import { recordEvent } from '../../../src/domain/events/outbox';
import { relayEvents } from '../../../src/domain/events/relay';
import { JOB_DEFINITIONS } from '../../../src/jobs';
import { adminToken, createCustomer } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { CustomerTimeline, CustomerTimelineDrainJob, OrderJournal, TEST_CONSUMERS } from '../../helpers/test-consumers';
import { fundedAccount, openOrder, setUpMarket } from '../../helpers/trading';
import { startReceiver } from '../../helpers/webhook-receiver';
import { countOf, expectHandedExactlyOnce, insertEvents, unpublishedCount } from './events-kit';

jest.setTimeout(60_000);

const CONSUMERS = TEST_CONSUMERS.consumers;

describe('the outbox relay in one deployment', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ label: 'relay', ...TEST_CONSUMERS });
  });
  afterAll(() => app?.stop());

  test('when events of several types are written, then each reaches exactly the consumers that want it, once, in write order', async () => {
    const token = await adminToken(app);
    const market = await setUpMarket(app, token);
    const customer = await createCustomer(app, token);
    const login = await fundedAccount(app, token, customer.id, market.groupId, 1000);
    const ticket = await openOrder(app, token, login);
    expect((await app.request('POST', `/orders/${ticket}/close`, { token })).status).toBe(200);
    // An event that concerns no customer and is no order: nobody wants it.
    const em = app.runtime.services.orm.em.fork() as EntityManager;
    recordEvent(em, { type: 'webhook.test', aggregateType: 'webhook', aggregateId: 'probe', data: { note: 'no customer' } });
    await em.flush();

    await waitFor('every event published', async () => (await unpublishedCount(app)) === 0);
    await expectHandedExactlyOnce(app, CONSUMERS);

    const handed = await sql<{ type: string; consumer: string | null }>(
      app,
      `select e.type, i.consumer from domain_events e left join event_inbox i on i.event_id = e.id and i.consumer like 'test.%'
        where e.customer_id = ? or e.customer_id is null order by e.seq, i.consumer`,
      [customer.id],
    );
    const byType = (type: string) => handed.filter((h) => h.type === type).map((h) => h.consumer);
    expect(byType('customer.created')).toEqual([CustomerTimeline.name]);
    expect(byType('deposit.completed')).toEqual([CustomerTimeline.name]);
    expect(byType('order.opened')).toEqual([OrderJournal.name, CustomerTimeline.name].sort());
    expect(byType('order.closed')).toEqual([OrderJournal.name, CustomerTimeline.name].sort());
    expect(byType('webhook.test')).toEqual([null]);

    // The journal's rows, in the order a consumer claims them, are the customer's order events in the order written.
    const journal = await sql<{ type: string; aggregate_id: string }>(
      app,
      `select e.type, e.aggregate_id from event_inbox i join domain_events e on e.id = i.event_id
        where i.consumer = ? and e.customer_id = ? order by i.event_seq`,
      [OrderJournal.name, customer.id],
    );
    expect(journal).toEqual([
      { type: 'order.opened', aggregate_id: String(ticket) },
      { type: 'order.closed', aggregate_id: String(ticket) },
    ]);
  });

  test('when the relay commits rows for a consumer with a worker, then it kicks the worker, which processes each row once', async () => {
    await insertEvents(app, 40);
    await waitFor(
      'the timeline worker to process its rows',
      async () =>
        (await unpublishedCount(app)) === 0 &&
        (await countOf(app, 'select count(*) as n from event_inbox where consumer = ? and processed_at is null', [
          CustomerTimeline.name,
        ])) === 0,
    );
    const drains = await app.runtime.services.jobs.queue(CustomerTimelineDrainJob.queue).getJobs(['completed']);
    expect(drains.some((j) => j.name === CustomerTimelineDrainJob.name)).toBe(true);
    // The journal has no worker: its rows wait, unprocessed, for one.
    expect(
      await countOf(app, 'select count(*) as n from event_inbox where consumer = ? and processed_at is not null', [
        OrderJournal.name,
      ]),
    ).toBe(0);
  });

  test('when published events are made unpublished again and relays race over them, then no consumer gets a second row', async () => {
    await insertEvents(app, 300);
    await waitFor('every event published', async () => (await unpublishedCount(app)) === 0);
    const before = await expectHandedExactlyOnce(app, CONSUMERS);

    await sql(app, 'update domain_events set published_at = null');
    const relays = Array.from({ length: 4 }, () =>
      relayEvents(app.runtime.services.orm.em.fork() as EntityManager, CONSUMERS, { batchSize: 50, budgetMs: 10_000 }),
    );
    const results = await Promise.all(relays);
    await waitFor('every event published again', async () => (await unpublishedCount(app)) === 0);
    expect(await expectHandedExactlyOnce(app, CONSUMERS)).toBe(before);
    // Racing runs take turns by batch: whichever ran found every row already handed over.
    for (const r of results) expect(Object.values(r.handed).reduce((a, b) => a + b, 0)).toBe(0);
  });
});

describe('two deployments instances relaying one outbox at once', () => {
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    // Small batches, a fast schedule: both instances' relays run many times while the events arrive.
    const env = { OUTBOX_RELAY_BATCH_SIZE: '100', OUTBOX_RELAY_INTERVAL_MS: '100' };
    first = await startTestApp({ label: 'relaytwo', env, ...TEST_CONSUMERS });
    second = await startTestApp({ shareWith: first, env, ...TEST_CONSUMERS });
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  test('when thousands of events arrive while both relay, then every event reaches each consumer that wants it exactly once', async () => {
    for (let i = 0; i < 10; i++) {
      await insertEvents(first, 300);
      // Direct runs from both instances as well, racing the scheduled ones.
      await Promise.all(
        [first, second].map((app) =>
          relayEvents(app.runtime.services.orm.em.fork() as EntityManager, CONSUMERS, { batchSize: 100, budgetMs: 1000 }),
        ),
      );
    }
    await waitFor('every event published', async () => (await unpublishedCount(first)) === 0, 30_000);
    const rows = await expectHandedExactlyOnce(first, CONSUMERS);
    // 3000 events: orders (1500) go to both consumers, customers (750) to the timeline only, instruments (750) to neither.
    expect(rows).toBe(1500 * 2 + 750);
  });
});

describe('the relay woken by commits', () => {
  let app: TestApp;
  beforeAll(async () => {
    // A schedule too slow to matter: whatever is relayed within seconds was relayed by the wake.
    app = await startTestApp({ label: 'relaywake', env: { OUTBOX_RELAY_INTERVAL_MS: '60000' } });
  });
  afterAll(() => app?.stop());

  const published = async (type: string) =>
    countOf(app, 'select count(*) as n from domain_events where type = ? and published_at is not null', [type]);
  const secret = 'a plain secret that is long enough 1234';
  const writeEvent = (type: string) =>
    sql<{ id: string }>(
      app,
      `insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, data)
       values (gen_random_uuid(), now(), now(), ?, 'pending_order', '1', '{}') returning id`,
      [type],
    );

  test('when an event commits, then it is relayed at once, not on the schedule; and it is fanned out to webhooks only once one subscribes to its type', async () => {
    // Start-up relays what waits; the schedule's next run is a minute away.
    await waitFor('the first scheduled run', async () => (await unpublishedCount(app)) === 0);
    const started = Date.now();
    await writeEvent('pending_order.modified');
    await waitFor('the event relayed', async () => (await published('pending_order.modified')) === 1, 10_000);
    expect(Date.now() - started).toBeLessThan(10_000);

    const token = await adminToken(app);
    const receiver = await startReceiver(secret);
    const res = await app.request('POST', '/webhooks', {
      token,
      body: {
        endpoint_url: receiver.url,
        secret,
        events: ['pending_order.modified'],
      },
    });
    expect(res.body).toMatchObject({ id: expect.any(String) });
    const [second] = await writeEvent('pending_order.modified');
    await waitFor('the second event relayed', async () => (await published('pending_order.modified')) === 2, 10_000);
    await waitFor('the delivery', async () => receiver.received.length === 1);
    // The event written before the webhook was saved is not for it: it gets the second alone.
    await new Promise((res) => setTimeout(res, 500));
    expect(receiver.received.flatMap((r) => r.verified!.events.map((e) => e.id))).toEqual([second!.id]);
    await receiver.close();
  });
});

describe('the lag metric', () => {
  let api: TestApp;
  beforeAll(async () => {
    api = await startTestApp({ label: 'relaylag', env: { ROLE: 'api' } });
  });
  afterAll(() => api?.stop());

  const lag = async () => {
    const text = (await api.request('GET', '/metrics')).text;
    const line = /^outbox_oldest_unpublished_seconds (\S+)$/m.exec(text);
    if (!line) throw new Error('no outbox_oldest_unpublished_seconds on /metrics');
    return Number(line[1]);
  };

  test('when an event waits unpublished, then /metrics shows its age; once a relay ran, 0', async () => {
    expect(await lag()).toBe(0);
    await sql(
      api,
      `insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, data)
       values (gen_random_uuid(), now() - interval '10 minutes', now(), 'instrument.updated', 'instrument', 'EURUSD', '{}')`,
    );
    expect(await lag()).toBeGreaterThanOrEqual(600);

    // The API tier does not relay; a worker instance of the same deployment does.
    const worker = await startTestApp({ shareWith: api, env: { ROLE: 'worker' } });
    try {
      await waitFor('the relay to catch up', async () => (await lag()) === 0);
    } finally {
      await worker.stop();
    }
  });
});

describe('consumer registration', () => {
  test('when names repeat or are malformed, a kick job is unknown, or a consumer both takes events and kicks, then start-up refuses the registry', () => {
    expect(checkConsumers(CONSUMERS, [...JOB_DEFINITIONS, CustomerTimelineDrainJob])).toHaveLength(2);
    expect(() => checkConsumers([OrderJournal, OrderJournal], JOB_DEFINITIONS)).toThrow(
      /two consumers are named "test.order-journal"/,
    );
    expect(() => checkConsumers([defineConsumer({ name: 'Bad Name', wants: () => true })], JOB_DEFINITIONS)).toThrow(
      ConsumerRegistryError,
    );
    expect(() => checkConsumers([CustomerTimeline], JOB_DEFINITIONS)).toThrow(/kicks unknown job "test-customer-timeline-drain"/);
    const both = defineConsumer({ ...CustomerTimeline, name: 'test.both', take: () => Promise.resolve([]) });
    expect(() => checkConsumers([both], [...JOB_DEFINITIONS, CustomerTimelineDrainJob])).toThrow(
      /"test.both" both takes events and kicks a job/,
    );
  });

  test('when a consumer is registered twice at start-up, then the runtime refuses to start', async () => {
    await expect(startTestApp({ label: 'relayreg', consumers: [OrderJournal, OrderJournal] })).rejects.toThrow(
      ConsumerRegistryError,
    );
  });
});
