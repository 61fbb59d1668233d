import { Entity, Index, Property } from '@mikro-orm/core';
import { BaseEntity } from './base.entity';

/**
 * The outbox: every state change that others may want to hear about (webhooks,
 * notifications) writes one row here in its own transaction. Publishers read unpublished
 * rows in order and mark them; nothing is lost between a commit and a send.
 */
@Entity({ tableName: 'domain_events' })
@Index({ properties: ['publishedAt', 'createdAt'] })
export class DomainEvent extends BaseEntity<'publishedAt' | 'customerId'> {
  /** `order.opened`, `order.closed`, `pending_order.modified`, `deposit.completed`, ... */
  @Property({ type: 'string', length: 64 })
  type!: string;

  @Property({ type: 'string', length: 32 })
  aggregateType!: string;

  @Property({ type: 'string', length: 64 })
  aggregateId!: string;

  /** The customer the event concerns, for notifications and affiliate routing. */
  @Property({ type: 'uuid', nullable: true })
  customerId?: string | null = null;

  @Property({ type: 'json' })
  data!: Record<string, unknown>;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  publishedAt?: Date | null = null;
}
