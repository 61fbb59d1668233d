import { type Ref } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { bigintText } from './column-types';
import { DomainEvent } from './domain-event.entity';
import { Webhook } from './webhook.entity';
import { WebhookDelivery } from './webhook-delivery.entity';

/**
 * One event owed to one webhook. The webhooks consumer's fan-out writes it with SQL in the
 * outbox relay's transaction that publishes the event; `delivery` is null until a delivery
 * step puts it in a batch. `event_seq` is the event's place in write order, which batches follow.
 */
@Entity({ tableName: 'webhook_messages' })
@Index({ name: 'webhook_messages_delivery_index', properties: ['delivery', 'eventSeq'] })
@Index({
  name: 'webhook_messages_unbatched_index',
  expression: `create index "webhook_messages_unbatched_index" on "webhook_messages" ("webhook_id", "event_seq") where delivery_id is null`,
})
export class WebhookMessage {
  @ManyToOne({ entity: () => Webhook, ref: true, primary: true, deleteRule: 'cascade' })
  webhook!: Ref<Webhook>;

  @ManyToOne({ entity: () => DomainEvent, ref: true, primary: true, deleteRule: 'cascade' })
  event!: Ref<DomainEvent>;

  @Property({ type: bigintText(), columnType: 'bigint' })
  eventSeq!: string;

  @ManyToOne({ entity: () => WebhookDelivery, ref: true, nullable: true, deleteRule: 'set null' })
  delivery?: Ref<WebhookDelivery> | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  createdAt: Date = new Date();
}
