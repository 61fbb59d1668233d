import type { EntityManager } from '@mikro-orm/postgresql';
import { removeExpiredRows } from '../../../src/domain/retention/retention';
import { RetentionJob } from '../../../src/jobs/retention.job';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';

jest.setTimeout(60_000);

const HOUR = 3_600_000;
const hoursAgo = (h: number) => new Date(Date.now() - h * HOUR);
const AGES = { outboxHours: 24, inboxHours: 24, webhookDeliveryHours: 48, mailHours: 48, reportDays: 7 };

interface ProbeEvent {
  id: string;
  seq: string;
  publication_seq: string | null;
}

async function event(app: TestApp, label: string, publishedHoursAgo: number | null): Promise<ProbeEvent> {
  const [row] = await sql<ProbeEvent>(
    app,
    `insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, data, published_at, publication_seq)
     values (gen_random_uuid(), ?, ?, 'retention.probe', 'probe', ?, '{}', ?::timestamptz,
             case when ?::timestamptz is not null then nextval('domain_event_publication_seq') end)
     returning id, seq, publication_seq`,
    [
      hoursAgo(100),
      hoursAgo(100),
      label,
      publishedHoursAgo === null ? null : hoursAgo(publishedHoursAgo),
      publishedHoursAgo === null ? null : hoursAgo(publishedHoursAgo),
    ],
  );
  return row!;
}

/** A report finished `finishedHoursAgo` (null: still running) with a one-chunk file. */
async function report(app: TestApp, status: string, finishedHoursAgo: number | null): Promise<string> {
  const [row] = await sql<{ id: string }>(
    app,
    `insert into reports (id, created_at, updated_at, type, format, params, status, finished_at)
     values (gen_random_uuid(), ?, ?, 'exposure', 'csv', '{}', ?, ?) returning id`,
    [hoursAgo(400), hoursAgo(400), status, finishedHoursAgo === null ? null : hoursAgo(finishedHoursAgo)],
  );
  await sql(app, `insert into report_chunks (report_id, seq, data) values (?, 0, '\\x00')`, [row!.id]);
  return row!.id;
}

async function inbox(app: TestApp, e: ProbeEvent, consumer: string, handledHoursAgo: number | null) {
  await sql(app, 'insert into event_inbox (event_id, consumer, event_seq, created_at, processed_at) values (?, ?, ?, ?, ?)', [
    e.id,
    consumer,
    e.seq,
    hoursAgo(100),
    handledHoursAgo === null ? null : hoursAgo(handledHoursAgo),
  ]);
}

async function delivery(app: TestApp, webhookId: string, status: string, updatedHoursAgo: number, e: ProbeEvent) {
  const [row] = await sql<{ id: string }>(
    app,
    `insert into webhook_deliveries (id, webhook_id, created_at, updated_at, status, event_count, first_event_seq,
                                     first_publication_seq, last_publication_seq, event_ids, next_attempt_at)
     values (gen_random_uuid(), ?, ?, ?, ?, 1, ?, ?, ?, array[?::uuid], ?) returning id`,
    [
      webhookId,
      hoursAgo(100),
      hoursAgo(updatedHoursAgo),
      status,
      e.seq,
      e.publication_seq,
      e.publication_seq,
      e.id,
      hoursAgo(updatedHoursAgo),
    ],
  );
  for (const attempt of [1, 2])
    await sql(
      app,
      'insert into webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code) values (gen_random_uuid(), ?, ?, ?, 10, 500)',
      [row!.id, attempt, hoursAgo(updatedHoursAgo + 1)],
    );
  return row!.id;
}

async function mail(app: TestApp, status: string, updatedHoursAgo: number): Promise<string> {
  const [row] = await sql<{ id: string }>(
    app,
    `insert into mail_messages (id, created_at, updated_at, template, locale, to_address, data, status)
     values (gen_random_uuid(), ?, ?, 'retention_probe', 'en', 'probe@example.test', '{}', ?) returning id`,
    [hoursAgo(100), hoursAgo(updatedHoursAgo), status],
  );
  return row!.id;
}

const present = async (app: TestApp, table: string, ids: string[]) =>
  (await sql<{ id: string }>(app, `select id from ${table} where id in (?)`, [ids])).map((r) => r.id).sort();

describe('retention of the outbox, the inbox, webhook deliveries and mail', () => {
  let app: TestApp;
  beforeAll(async () => {
    // Only the mail queue is served: no relay publishes the unpublished probe, no dispatcher batches messages.
    app = await startTestApp({ label: 'retention', env: { WORKER_QUEUES: 'mail' } });
  });
  afterAll(() => app?.stop());

  test('when rows are older than their ages, then they go; younger, unpublished, unhandled or still-needed ones stay; a second run deletes nothing', async () => {
    const [webhook] = await sql<{ id: string }>(
      app,
      `insert into webhooks (id, created_at, updated_at, endpoint_url, secret_sealed, is_active)
       values (gen_random_uuid(), now(), now(), 'https://receiver.example.test/hook', 'sealed', false) returning id`,
    );
    const relayedAndHandled = await event(app, 'relayed-and-handled', 30);
    await inbox(app, relayedAndHandled, 'probe.a', 30);
    const awaitingAConsumer = await event(app, 'awaiting-a-consumer', 30);
    await inbox(app, awaitingAConsumer, 'probe.a', 30);
    await inbox(app, awaitingAConsumer, 'probe.b', null);
    const unpublished = await event(app, 'unpublished', null);
    const recent = await event(app, 'recent', 10);
    await inbox(app, recent, 'probe.a', 30);
    await inbox(app, recent, 'probe.b', 10);
    const inPendingDelivery = await event(app, 'in-pending-delivery', 30);
    const inOldDelivery = await event(app, 'in-old-delivery', 30);
    const oldDelivered = await delivery(app, webhook!.id, 'delivered', 60, inOldDelivery);
    const youngFailed = await delivery(app, webhook!.id, 'failed', 10, await event(app, 'in-young-delivery', 30));
    const oldPending = await delivery(app, webhook!.id, 'pending', 60, inPendingDelivery);
    const oldSent = [await mail(app, 'sent', 60), await mail(app, 'failed', 60), await mail(app, 'unknown', 60)];
    const keptMail = [await mail(app, 'queued', 60), await mail(app, 'sending', 60), await mail(app, 'sent', 10)];

    const oldReports = [await report(app, 'completed', 8 * 24), await report(app, 'failed', 8 * 24)];
    const keptReports = [await report(app, 'completed', 6 * 24), await report(app, 'running', null)];

    const em = app.runtime.services.orm.em.fork() as EntityManager;
    // Batches of one: the sweep must go on past a full batch until the table has nothing more to delete.
    const first = await removeExpiredRows(em, AGES, { batchSize: 1, budgetMs: 30_000 });
    expect(first).toEqual({
      inbox: 3,
      webhookDeliveries: 1,
      mail: 3,
      outbox: 2,
      reports: 2,
      inbound: 0,
      registrations: 0,
      attachments: 0,
    });

    const events = await sql<{ aggregate_id: string }>(
      app,
      "select aggregate_id from domain_events where type = 'retention.probe' order by aggregate_id",
    );
    expect(events.map((e) => e.aggregate_id)).toEqual([
      'awaiting-a-consumer',
      'in-pending-delivery',
      'in-young-delivery',
      'recent',
      'unpublished',
    ]);
    expect(await present(app, 'domain_events', [relayedAndHandled.id, inOldDelivery.id, unpublished.id])).toEqual([
      unpublished.id,
    ]);
    const inboxRows = await sql<{ event_id: string; consumer: string }>(
      app,
      'select event_id, consumer from event_inbox where event_id in (?) order by event_id, consumer',
      [[relayedAndHandled.id, awaitingAConsumer.id, recent.id]],
    );
    expect(inboxRows).toEqual(
      [
        { event_id: awaitingAConsumer.id, consumer: 'probe.b' },
        { event_id: recent.id, consumer: 'probe.b' },
      ].sort((a, b) => a.event_id.localeCompare(b.event_id)),
    );
    expect(await present(app, 'webhook_deliveries', [oldDelivered, youngFailed, oldPending])).toEqual(
      [youngFailed, oldPending].sort(),
    );
    const attempts = await sql<{ delivery_id: string; n: number }>(
      app,
      'select delivery_id, count(*)::int as n from webhook_attempts group by delivery_id order by delivery_id',
    );
    expect(attempts).toEqual([youngFailed, oldPending].sort().map((id) => ({ delivery_id: id, n: 2 })));
    expect(await present(app, 'mail_messages', [...oldSent, ...keptMail])).toEqual([...keptMail].sort());
    expect(await present(app, 'reports', [...oldReports, ...keptReports])).toEqual([...keptReports].sort());
    // The files went with their reports (by cascade); the kept ones keep theirs.
    expect(await sql(app, 'select distinct report_id from report_chunks order by report_id')).toEqual(
      [...keptReports].sort().map((id) => ({ report_id: id })),
    );

    expect(await removeExpiredRows(em, AGES, { batchSize: 1, budgetMs: 30_000 })).toEqual({
      inbox: 0,
      webhookDeliveries: 0,
      mail: 0,
      outbox: 0,
      reports: 0,
      inbound: 0,
      registrations: 0,
      attachments: 0,
    });
  });

  test('when the outbox age asked for is under the 24-hour stream resume window, then events inside the window stay', async () => {
    const withinWindow = await event(app, 'within-resume-window', 20);
    const removed = await removeExpiredRows(
      app.runtime.services.orm.em.fork() as EntityManager,
      { ...AGES, outboxHours: 1 },
      {
        batchSize: 100,
        budgetMs: 30_000,
      },
    );
    expect(removed.outbox).toBe(0);
    expect(await present(app, 'domain_events', [withinWindow.id])).toEqual([withinWindow.id]);
  });

  test('when a webhook has yet to read an old event, then it stays until the cursor passes it; a webhook turned off keeps only what it owed', async () => {
    const em = app.runtime.services.orm.em.fork() as EntityManager;
    // Saved before the events: its cursor (a fresh publication number) lies behind them.
    const [webhook] = await sql<{ id: string }>(
      app,
      `insert into webhooks (id, created_at, updated_at, endpoint_url, secret_sealed, is_active)
       values (gen_random_uuid(), now(), now(), 'https://receiver.example.test/cursor', 'sealed', true) returning id`,
    );
    const owed = await event(app, 'behind-a-cursor', 30);
    const later = await event(app, 'written-while-off', 30);
    expect((await removeExpiredRows(em, AGES, { batchSize: 10, budgetMs: 30_000 })).outbox).toBe(0);
    // Turned off between the two: it still owes the first, not the second.
    await sql(app, 'update webhooks set is_active = false, paused_seq = ? where id = ?', [owed.publication_seq, webhook!.id]);
    expect((await removeExpiredRows(em, AGES, { batchSize: 10, budgetMs: 30_000 })).outbox).toBe(1);
    expect(await present(app, 'domain_events', [owed.id, later.id])).toEqual([owed.id]);
    // Its cursor past it (read, or turned on again): nothing holds it.
    await sql(app, 'update webhooks set cursor_seq = ? where id = ?', [owed.publication_seq, webhook!.id]);
    expect((await removeExpiredRows(em, AGES, { batchSize: 10, budgetMs: 30_000 })).outbox).toBe(1);
    expect(await present(app, 'domain_events', [owed.id])).toEqual([]);
  });
});

describe('the retention job', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ label: 'retention-job' });
  });
  afterAll(() => app?.stop());

  test('when the worker tier runs, then the job is scheduled, and a run deletes what is past its age by the configured ages', async () => {
    const { jobs, queueEvents } = app.runtime.services;
    expect(await jobs.scheduled(RetentionJob, 'retention')).toMatchObject({ everyMs: 15 * 60_000 });
    const old = await event(app, 'old', 800);
    const young = await event(app, 'young', 100);
    const oldMail = await mail(app, 'sent', 800);
    const youngMail = await mail(app, 'sent', 700);

    const job = await jobs.enqueue(RetentionJob, {});
    const result = await queueEvents.waitFor(job, 20_000);
    // Counts are not compared: a scheduled run may have taken some of these rows first.
    expect(result).toEqual({
      inbox: expect.any(Number),
      webhookDeliveries: expect.any(Number),
      mail: expect.any(Number),
      outbox: expect.any(Number),
      reports: expect.any(Number),
      inbound: expect.any(Number),
      registrations: expect.any(Number),
      attachments: expect.any(Number),
    });
    // A scheduled run may hold the old rows (SKIP LOCKED) until its own delete commits.
    await waitFor('the old event and mail to be deleted', async () => {
      const events = await present(app, 'domain_events', [old.id, young.id]);
      const mails = await present(app, 'mail_messages', [oldMail, youngMail]);
      return events.length === 1 && mails.length === 1;
    });
    expect(await present(app, 'domain_events', [old.id, young.id])).toEqual([young.id]);
    expect(await present(app, 'mail_messages', [oldMail, youngMail])).toEqual([youngMail]);
  });
});
