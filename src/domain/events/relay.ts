import type { EntityManager } from '@mikro-orm/postgresql';
import { toOutboxEvent, type EventConsumer, type OutboxEvent, type QueuedJob } from './consumers';
import { executeNamed } from '../../db/bound-statement';
import { CLAIM_UNPUBLISHED, HAND_TO_CONSUMERS, RELAY_LAG, TRY_XACT_LOCK, XACT_LOCK } from './events.queries';

/** Any fixed key: the transaction-level advisory lock that lets one relay batch run at a time. */
const RELAY_LOCK = 0x6f7574626f78;
/** How often a run that found the lock taken tries again, and for how long at most (then the schedule carries on). */
const BUSY_RETRY_MS = 10;
const BUSY_WAIT_MAX_MS = 1000;

export interface RelayOptions {
  /** Events claimed per transaction. */
  batchSize: number;
  /** Stop starting new batches after this long; the next scheduled run carries on. */
  budgetMs: number;
  /**
   * Called after each commit that handed events over, with the jobs to queue: the `kick` of
   * each consumer that got inbox rows, and the jobs the consumers that take events asked for.
   */
  afterCommit?: (jobs: QueuedJob[]) => Promise<void>;
  /** Called after each commit with the events it marked published, in seq order (the live feed). */
  afterPublish?: (events: OutboxEvent[]) => Promise<void>;
}

export interface RelayResult {
  /** Events marked published by this run. */
  published: number;
  /** Inbox rows written, or events taken, by consumer name. */
  handed: Record<string, number>;
  batches: number;
  /** Another relay held the lock throughout: this run did nothing. */
  busy: boolean;
}

type BatchOutcome = 'busy' | { claimed: number; handed: Map<string, number>; jobs: QueuedJob[]; events: OutboxEvent[] };

/**
 * The outbox relay: hands every unpublished domain event to the consumers that want it, in
 * batches, each batch one transaction that claims the events (`FOR UPDATE SKIP LOCKED`, in
 * `seq` order), writes one `event_inbox` row per wanting consumer (or lets a consumer that
 * takes events write its own rows) and marks the events published. A crash anywhere before
 * the commit leaves the batch unpublished and unhanded for the next run; after it, the batch
 * is done. The inbox key (event, consumer) and ON CONFLICT DO NOTHING make a re-published
 * event harmless. So every event reaches each consumer that wants it exactly once.
 *
 * Batches run one at a time across all relays (a transaction-level advisory lock): two
 * batches committing in parallel could make an account's later event visible to a consumer
 * before its earlier one, and webhook delivery needs them in write order. A batch is a few
 * statements, so one relay at a time hands over thousands of events a second. A run that
 * finds the lock taken tries again every few milliseconds rather than return: it was woken
 * for events the holder's batch may have claimed too early to see, so it ends only after a
 * batch of its own (up to BUSY_WAIT_MAX_MS, after which the schedule carries on).
 */
export async function relayEvents(
  em: EntityManager,
  consumers: readonly EventConsumer[],
  options: RelayOptions,
): Promise<RelayResult> {
  const result: RelayResult = { published: 0, handed: {}, batches: 0, busy: false };
  // What follows a commit (queueing jobs, the live feed) runs while the next batch is relayed,
  // one batch after another so the feed keeps publication order; the run ends after the last.
  let after: Promise<void> = Promise.resolve();
  let afterFailure: { error: unknown } | undefined;
  const handOn = (jobs: QueuedJob[], events: OutboxEvent[]) => {
    after = after.then(async () => {
      try {
        if (jobs.length && options.afterCommit) await options.afterCommit(jobs);
        if (options.afterPublish) await options.afterPublish(events);
      } catch (error) {
        afterFailure ??= { error };
      }
    });
  };
  try {
    await relayBatches(em, consumers, options, result, handOn);
  } finally {
    await after;
  }
  if (afterFailure) throw afterFailure.error;
  return result;
}

async function relayBatches(
  em: EntityManager,
  consumers: readonly EventConsumer[],
  options: RelayOptions,
  result: RelayResult,
  handOn: (jobs: QueuedJob[], events: OutboxEvent[]) => void,
): Promise<void> {
  const started = Date.now();
  let busySince: number | undefined;
  for (;;) {
    const outcome = await relayBatch(em, consumers, options.batchSize);
    if (outcome === 'busy') {
      busySince ??= Date.now();
      if (Date.now() - busySince < BUSY_WAIT_MAX_MS) {
        await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
        continue;
      }
      result.busy = result.batches === 0;
      return;
    }
    busySince = undefined;
    if (outcome.claimed === 0) return;
    result.batches += 1;
    result.published += outcome.claimed;
    for (const [name, n] of outcome.handed) result.handed[name] = (result.handed[name] ?? 0) + n;
    handOn(outcome.jobs, outcome.events);
    if (outcome.claimed < options.batchSize || Date.now() - started >= options.budgetMs) return;
  }
}

async function relayBatch(em: EntityManager, consumers: readonly EventConsumer[], batchSize: number): Promise<BatchOutcome> {
  return em.transactional(async (tx) => {
    const [lock] = await executeNamed<{ locked: boolean }>(tx, TRY_XACT_LOCK.bind({ key: RELAY_LOCK }));
    if (!lock?.locked) return 'busy' as const;
    const rows = await executeNamed<Parameters<typeof toOutboxEvent>[0]>(tx, CLAIM_UNPUBLISHED.bind({ limit: batchSize }));
    if (rows.length === 0) return { claimed: 0, handed: new Map(), jobs: [], events: [] };

    const events = rows.map(toOutboxEvent);
    for (const consumer of consumers) await consumer.prepare?.(tx as EntityManager, events);
    const entries: Array<{ event_id: string; consumer: string; event_seq: string }> = [];
    const taken = new Map<EventConsumer, OutboxEvent[]>();
    for (const event of events) {
      for (const consumer of consumers) {
        if (!wants(consumer, event)) continue;
        if (!consumer.take) entries.push({ event_id: event.id, consumer: consumer.name, event_seq: event.seq });
        else if (taken.has(consumer)) taken.get(consumer)!.push(event);
        else taken.set(consumer, [event]);
      }
    }
    // One statement: the inbox rows and the published mark commit together or not at all. It
    // counts the rows it actually wrote (an event already handed to a consumer gets none).
    const written = await executeNamed<{ consumer: string; n: number }>(
      tx,
      HAND_TO_CONSUMERS.bind({
        entries: JSON.stringify(entries),
        published: JSON.stringify(events.map((e) => ({ id: e.id, publication_seq: e.publicationSeq }))),
      }),
    );
    const handed = new Map(written.map((w) => [w.consumer, Number(w.n)]));
    const jobs: QueuedJob[] = [];
    for (const consumer of consumers) {
      if (consumer.kick && handed.get(consumer.name)) jobs.push({ job: consumer.kick, payload: {} });
    }
    for (const [consumer, wanted] of taken) {
      jobs.push(...(await consumer.take!(tx as EntityManager, wanted)));
      handed.set(consumer.name, wanted.length);
    }
    return { claimed: rows.length, handed, jobs, events };
  });
}

function wants(consumer: EventConsumer, event: OutboxEvent): boolean {
  try {
    return consumer.wants(event) === true;
  } catch (err) {
    // Names the consumer and the event, never the event's data.
    throw new Error(`consumer "${consumer.name}" failed on event ${event.id} (${event.type}): ${(err as Error).message}`, {
      cause: err,
    });
  }
}

/**
 * Waits for the relay batch in flight, if any, and keeps the next from starting until the
 * caller's transaction ends: every publication number drawn before this returns belongs to an
 * event that has committed (or to a batch rolled back), so a reader of the outbox by
 * publication order sees everything up to it.
 */
export async function holdRelay(tx: EntityManager): Promise<void> {
  await executeNamed(tx, XACT_LOCK.bind({ key: RELAY_LOCK }));
}

/** Seconds since the oldest unpublished event was written (0 when none): the relay's lag. */
export async function outboxLagSeconds(em: EntityManager): Promise<number> {
  const [row] = await executeNamed<{ lag: number | string | null }>(em, RELAY_LAG.bind({}));
  return row?.lag === null || row?.lag === undefined ? 0 : Math.max(0, Number(row.lag));
}
