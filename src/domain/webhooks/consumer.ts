import type { EventConsumer } from '../events/consumers';
import { WebhooksDispatchJob } from '../../jobs/webhooks.job';

/** The consumer's persistent name (event_inbox.consumer): do not rename. */
export const WEBHOOK_CONSUMER_NAME = 'webhooks';

/**
 * Webhook dispatch as an outbox consumer (registered in EVENT_CONSUMERS, src/event-consumers.ts).
 * It wants every event: which webhook wants which is decided at fan-out from the webhooks
 * table (dispatch.ts), which a relay predicate must not read.
 */
export const WebhookConsumer: EventConsumer = {
  name: WEBHOOK_CONSUMER_NAME,
  wants: () => true,
  kick: WebhooksDispatchJob,
};
