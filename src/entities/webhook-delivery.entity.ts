import { ArrayType, type Ref } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { bigintText } from './column-types';
import { Webhook } from './webhook.entity';

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/**
 * One batch of events sent to a webhook as one request, retried until delivered or failed.
 * Written only with SQL: the `webhook_delivery_steps` function (src/db/functions) claims,
 * leases and records it, and the API reads it for the delivery log. Mapped so the schema
 * generator knows the table; the hot path does not go through the unit of work.
 * `first_event_seq` orders a webhook's batches, so a receiver sees its events in order.
 * `event_ids` are the events it carries, in the order sent; they lie between its first and
 * last publication numbers, the range retention looks up to keep a kept delivery's events.
 */
@Entity({ tableName: 'webhook_deliveries' })
@Index({ name: 'webhook_deliveries_list_index', properties: ['webhook', 'createdAt'] })
@Index({
  name: 'webhook_deliveries_pending_index',
  expression: `create index "webhook_deliveries_pending_index" on "webhook_deliveries" ("webhook_id", "first_event_seq") where status = 'pending'`,
})
@Index({
  name: 'webhook_deliveries_events_index',
  expression: `create index "webhook_deliveries_events_index" on "webhook_deliveries" using gist (int8range("first_publication_seq", "last_publication_seq", '[]'))`,
})
export class WebhookDelivery extends BaseEntity<'status' | 'attempts' | 'leaseUntil' | 'deliveredAt'> {
  @ManyToOne({ entity: () => Webhook, ref: true, deleteRule: 'cascade' })
  webhook!: Ref<Webhook>;

  @Enum({ items: [...WEBHOOK_DELIVERY_STATUSES], type: 'string', columnType: 'varchar(16)', default: 'pending' })
  status: WebhookDeliveryStatus = 'pending';

  @Property({ type: 'integer' })
  eventCount!: number;

  @Property({ type: bigintText(), columnType: 'bigint' })
  firstEventSeq!: string;

  @Property({ type: bigintText(), columnType: 'bigint' })
  firstPublicationSeq!: string;

  @Property({ type: bigintText(), columnType: 'bigint' })
  lastPublicationSeq!: string;

  @Property({ type: ArrayType, columnType: 'uuid[]' })
  eventIds!: string[];

  @Property({ type: 'integer', default: 0 })
  attempts: number = 0;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  nextAttemptAt!: Date;

  /** Until when a worker holds it; a lease in the past with the delivery still pending means that worker stopped. */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  leaseUntil?: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  deliveredAt?: Date | null = null;
}
