import type { EventConsumer } from './domain/events/consumers';
import { NotificationsConsumer } from './domain/notifications/notifications';
import { PropChallengesConsumer } from './domain/prop/challenge-consumer';
import { WebhookConsumer } from './domain/webhooks/consumer';

/**
 * The consumers the service ships: customer notifications, webhook dispatch and the prop
 * challenge rules after closes. The list sits
 * here, beside the composition of the app, and not in domain/events: the domain areas that
 * consume events import the consumer contract, and the contract must not import them back. A
 * consumer added later is handed the events published after it starts, never the ones
 * published before.
 */
export const EVENT_CONSUMERS: readonly EventConsumer[] = [NotificationsConsumer, WebhookConsumer, PropChallengesConsumer];
