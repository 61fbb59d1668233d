import type { EntityManager } from '@mikro-orm/postgresql';
import type { EventConsumer, OutboxEvent } from '../events/consumers';
import { WebhooksDispatchJob } from '../../jobs/webhooks.job';
import { executeNamed } from '../../db/bound-statement';
import { SUBSCRIBED_TYPES } from './webhooks.queries';

/** The consumer's persistent name (event_inbox.consumer): do not rename. */
export const WEBHOOK_CONSUMER_NAME = 'webhooks';

/** The longest a known subscription is trusted without a read: after that, types nobody wants any more stop being copied. */
const REFRESH_MS = 10_000;

/**
 * The event types some active webhook subscribes to, as last read. The set only decides
 * what is copied to the webhooks inbox; which webhook gets which event is still decided at
 * fan-out from the webhooks table (dispatch.ts). So it may be wrong in one direction only: a
 * type it lists that nobody wants any more costs a copy that fan-out drops, but a type it
 * does not list would lose events. Hence a batch with any type outside the set is checked
 * against the table first, in the relay's own transaction, which sees every webhook committed
 * before the batch's events were claimed: a webhook sees every event committed after it was
 * saved. A batch whose types are all listed costs no read at all.
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
 * Webhook dispatch as an outbox consumer (registered in EVENT_CONSUMERS, src/event-consumers.ts).
 * It wants the event types some active webhook subscribes to (SubscribedTypes above).
 */
export const WebhookConsumer: EventConsumer = {
  name: WEBHOOK_CONSUMER_NAME,
  wants: (event) => subscribed.covers(event.type),
  prepare: (tx, events) => subscribed.prepare(tx, events),
  kick: WebhooksDispatchJob,
};
