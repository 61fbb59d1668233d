import { randomUUID } from 'node:crypto';
import { toOutboxEvent, type EventConsumer } from '../../../src/domain/events/consumers';
import { sql, type TestApp } from '../../helpers/test-app';

export const EVENT_TYPES = ['order.opened', 'order.closed', 'customer.created', 'instrument.updated'] as const;

/** Writes `n` events in one statement, cycling through EVENT_TYPES: orders and customers name a customer, instrument updates do not. */
export async function insertEvents(app: TestApp, n: number, customerId = randomUUID()): Promise<void> {
  await sql(
    app,
    `insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, customer_id, data)
     select gen_random_uuid(), now(), now(), (?::text[])[1 + i % 4],
            case i % 4 when 2 then 'customer' when 3 then 'instrument' else 'order' end, i::text,
            case when i % 4 = 3 then null else ?::uuid end, jsonb_build_object('n', i)
       from generate_series(0, ? - 1) i`,
    [`{${EVENT_TYPES.join(',')}}`, customerId, n],
  );
}

export async function countOf(app: TestApp, query: string, params: unknown[] = []): Promise<number> {
  const [row] = await sql<{ n: string }>(app, query, params);
  return Number(row!.n);
}

export const unpublishedCount = (app: TestApp) =>
  countOf(app, 'select count(*) as n from domain_events where published_at is null');

/**
 * The exactly-once check, from the stored rows: every event is published, and the inbox holds
 * exactly one row for each (event, consumer that wants it) and nothing else, with the event's
 * seq (among the rows of the consumers given). Evaluates the consumers' own predicates over the stored events.
 */
export async function expectHandedExactlyOnce(app: TestApp, consumers: readonly EventConsumer[]): Promise<number> {
  const events = (
    await sql<Parameters<typeof toOutboxEvent>[0] & { published_at: Date | null }>(
      app,
      'select * from domain_events order by seq',
    )
  ).map((row) => ({ event: toOutboxEvent(row), published: row.published_at !== null }));
  expect(events.filter((e) => !e.published).map((e) => e.event.id)).toEqual([]);

  const expected = events.flatMap(({ event }) =>
    consumers.filter((c) => c.wants(event)).map((c) => `${event.id} ${c.name} ${event.seq}`),
  );
  // Only the given consumers' rows: the shipped consumers (webhook dispatch, ...) get theirs too.
  const inbox = await sql<{ key: string }>(
    app,
    `select event_id || ' ' || consumer || ' ' || event_seq as key from event_inbox
      where consumer in (select value from jsonb_array_elements_text(?::jsonb)) order by event_seq, consumer`,
    [JSON.stringify(consumers.map((c) => c.name))],
  );
  const actual = inbox.map((r) => r.key);
  expect(actual.length).toBe(expected.length);
  expect(new Set(actual).size).toBe(actual.length);
  expect([...actual].sort()).toEqual([...expected].sort());
  return actual.length;
}
