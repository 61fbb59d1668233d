import type { EntityManager } from '@mikro-orm/postgresql';
import type { EventConsumer, OutboxEvent, QueuedJob } from '../events/consumers';
import { WebhookDeliverJob } from '../../jobs/webhooks.job';
import { executeNamed } from '../../db/bound-statement';
import { SUBSCRIBED_TYPES, WEBHOOKS_TO_KICK } from './webhooks.queries';

/** The consumer's persistent name (it named the webhooks' rows in event_inbox): do not rename. */
export const WEBHOOK_CONSUMER_NAME = 'webhooks';

/** The longest a known subscription is trusted without a read: after that, types nobody wants any more stop being copied. */
const REFRESH_MS = 10_000;

/**
 * The event types some active webhook subscribes to, as last read. The set only decides
 * which events make the relay queue delivery runs at all; which webhook gets which event is
 * decided by its own claim, which reads the outbox. So it may be wrong in one direction only:
 * a type it lists that nobody wants any more costs a look that kicks nobody, but a type it
 * does not list would leave the events to the schedule's next look (up to a second later).
 * Hence a batch with any type outside the set is checked against the table first, in the
 * relay's own transaction, which sees every webhook committed before the batch's events were
 * claimed. A batch whose types are all listed costs no read at all.
 */
class SubscribedTypes {
  private types = new Set<string>();
  private everyType = false;
  private readAt = Number.NEGATIVE_INFINITY;

  covers(type: string): boolean {
    return this.everyType || this.types.has(type);
  }

  async prepare(tx: EntityManager, events: readonly OutboxEvent[]): Promise<void> {
    if (Date.now() - this.readAt < REFRESH_MS && events.every((e) => this.covers(e.type))) return;
    const [row] = await executeNamed<{ active: number; every_type: boolean; types: string[] }>(tx, SUBSCRIBED_TYPES.bind({}));
    this.everyType = row?.every_type ?? false;
    this.types = new Set(row?.types ?? []);
    // `webhook.test` goes to the webhook it names, which must be active.
    if ((row?.active ?? 0) > 0) this.types.add('webhook.test');
    this.readAt = Date.now();
  }
}

const subscribed = new SubscribedTypes();

/**
 * Asks for a delivery run of each active webhook that may take some of the batch's events, in
 * the relay's transaction (it sees every webhook committed before the batch was claimed). Nothing
 * is written: each webhook reads the outbox itself past its cursor. The kick carries the last
 * event's publication number in its job id, so a run of that webhook about to end cannot
 * swallow it.
 */
async function kick(tx: EntityManager, events: readonly OutboxEvent[]): Promise<QueuedJob[]> {
  const last = events[events.length - 1]?.publicationSeq;
  if (!last) return [];
  const rows = await executeNamed<{ webhook_id: string }>(
    tx,
    WEBHOOKS_TO_KICK.bind({
      events: JSON.stringify(events.map((e) => ({ type: e.type, target: e.type === 'webhook.test' ? e.data.webhook_id : null }))),
    }),
  );
  return rows.map((r) => ({ job: WebhookDeliverJob, payload: { webhook_id: r.webhook_id, after: last } }));
}

/**
 * Webhook dispatch as an outbox consumer (registered in EVENT_CONSUMERS, src/policy.ts).
 * It wants the event types some active webhook subscribes to (SubscribedTypes above) and
 * takes them in the relay's transaction.
 */
export const WebhookConsumer: EventConsumer = {
  name: WEBHOOK_CONSUMER_NAME,
  wants: (event) => subscribed.covers(event.type),
  prepare: (tx, events) => subscribed.prepare(tx, events),
  take: kick,
};
