import type { EntityManager } from '@mikro-orm/postgresql';
import type { JobDefinition } from '../../jobs/job-definition';
import { executeNamed } from '../../db/bound-statement';
import { CLAIM_INBOX, MARK_INBOX_PROCESSED } from './events.queries';

/** A domain event as the relay shows it to consumers' predicates and as consumers read it. */
export interface OutboxEvent {
  id: string;
  /** Write order (domain_events.seq), as decimal text: events of one locked aggregate are numbered in the order written. */
  seq: string;
  type: string;
  aggregateType: string;
  aggregateId: string;
  customerId: string | null;
  data: Record<string, unknown>;
  createdAt: Date;
  /** Publication order (domain_events.publication_seq), as decimal text: set by the relay as it hands the event over. */
  publicationSeq?: string;
}

/**
 * Something that wants to hear about some domain events (notifications, webhook dispatch).
 * The outbox relay writes one `event_inbox` row per event the consumer wants, in the
 * transaction that marks the event published; the consumer's own worker then works through
 * its rows with `processInbox`. A consumer with `take` gets the events in that transaction
 * instead, and no inbox rows.
 */
export interface EventConsumer {
  /**
   * Persistent identifier, stored in `event_inbox.consumer` (like a queue name): renaming a
   * consumer strands its unprocessed rows. Lower case letters, digits, `.`, `_`, `-`.
   */
  name: string;
  /**
   * Whether the consumer wants this event. Called by the relay inside its transaction, so it
   * must be pure, quick and total: a throw stops the relay at that event (the lag metric
   * shows it) rather than skip it.
   */
  wants(event: OutboxEvent): boolean;
  /**
   * Called by the relay in its transaction before `wants` is asked about a batch, for a
   * consumer whose answer depends on stored state (which webhooks subscribe to what): it may
   * read what it needs in `tx`, which sees every row committed before the batch was claimed.
   */
  prepare?(tx: EntityManager, events: readonly OutboxEvent[]): Promise<void>;
  /**
   * For a consumer that keeps rows of its own instead of inbox rows: the relay calls it in its
   * transaction with the batch's events the consumer wants (in `seq` order), so what it writes
   * commits with the published mark or not at all, and batches reach it one at a time, in
   * publication order, with no queue hop between the relay and the consumer's work. It answers
   * the jobs to queue once the batch commits (best effort, as `kick`: the consumer's schedule
   * must find work whose job was lost). A consumer that takes events has no `kick`.
   */
  take?(tx: EntityManager, events: readonly OutboxEvent[]): Promise<QueuedJob[]>;
  /**
   * A job (its payload `{}`) added after the relay commits rows for this consumer, so its
   * worker runs at once. Best effort: a kick lost to a Redis outage is not retried, so the
   * consumer must also look at its rows on a schedule of its own. Its worker should drain
   * (loop until a claim comes back empty), and the job should not be deduplicated while it
   * runs, or rows committed during a run could wait for the schedule.
   */
  kick?: JobDefinition;
}

/** A job to queue, with its payload. */
export interface QueuedJob {
  job: JobDefinition;
  payload: unknown;
}

export function defineConsumer(consumer: EventConsumer): EventConsumer {
  return consumer;
}

const CONSUMER_NAME = /^[a-z][a-z0-9._-]{0,63}$/;

export class ConsumerRegistryError extends Error {}

/**
 * Start-up refuses a registry with a malformed or repeated name (two consumers would share
 * rows), or a kick job that no worker knows or that refuses the empty payload.
 */
export function checkConsumers(consumers: readonly EventConsumer[], jobs: readonly JobDefinition[]): readonly EventConsumer[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const known = new Set(jobs.map((j) => j.name));
  for (const c of consumers) {
    if (!CONSUMER_NAME.test(c.name))
      problems.push(`consumer name "${c.name}" is not 1 to 64 of a-z 0-9 . _ - starting with a letter`);
    if (seen.has(c.name)) problems.push(`two consumers are named "${c.name}"`);
    seen.add(c.name);
    if (c.kick && !known.has(c.kick.name)) problems.push(`consumer "${c.name}" kicks unknown job "${c.kick.name}"`);
    if (c.kick && c.take) problems.push(`consumer "${c.name}" both takes events and kicks a job`);
    if (c.kick && !c.kick.schema.safeParse({}).success)
      problems.push(`consumer "${c.name}" kicks "${c.kick.name}", which refuses {}`);
  }
  if (problems.length) throw new ConsumerRegistryError(`Event consumers are inconsistent: ${problems.join('; ')}`);
  return Object.freeze([...consumers]);
}

interface EventRow {
  id: string;
  seq: string;
  type: string;
  aggregate_type: string;
  aggregate_id: string;
  customer_id: string | null;
  data: Record<string, unknown> | string;
  created_at: Date;
  publication_seq?: string | null;
}

export function toOutboxEvent(row: EventRow): OutboxEvent {
  return {
    id: row.id,
    seq: String(row.seq),
    type: row.type,
    aggregateType: row.aggregate_type,
    aggregateId: row.aggregate_id,
    customerId: row.customer_id,
    data: typeof row.data === 'string' ? JSON.parse(row.data) : row.data,
    createdAt: row.created_at,
    ...(row.publication_seq ? { publicationSeq: String(row.publication_seq) } : {}),
  };
}

/**
 * A consumer's worker step: claims up to `limit` of the consumer's unprocessed inbox rows in
 * write order, skipping rows another worker holds, and runs `handle` on their events in the
 * same transaction that marks them processed. So an event's effect commits exactly once per
 * consumer, with any number of workers, and a worker killed mid-way leaves its rows to the
 * next. Returns how many rows it processed (0: nothing left). Rows of one aggregate can be
 * claimed by two workers at once; a consumer that needs them strictly in order must claim per
 * aggregate (as webhook delivery does).
 */
export async function processInbox(
  em: EntityManager,
  consumer: string,
  limit: number,
  handle: (tx: EntityManager, events: OutboxEvent[]) => Promise<void>,
): Promise<number> {
  return em.transactional(async (tx) => {
    const rows = await executeNamed<EventRow>(tx, CLAIM_INBOX.bind({ consumer, limit }));
    if (rows.length === 0) return 0;
    const events = rows.map(toOutboxEvent);
    await handle(tx as EntityManager, events);
    await executeNamed(tx, MARK_INBOX_PROCESSED.bind({ consumer, event_ids: JSON.stringify(events.map((e) => e.id)) }));
    return events.length;
  });
}
