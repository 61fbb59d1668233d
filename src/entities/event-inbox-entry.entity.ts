import { OptionalProps, type Ref } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { bigintText } from './column-types';
import { DomainEvent } from './domain-event.entity';

/**
 * One domain event handed to one consumer (domain/events/consumers.ts). The outbox relay
 * writes these rows in the transaction that marks the event published; the consumer's
 * worker claims its own unprocessed rows in `event_seq` order and sets `processed_at` in
 * the transaction that does its work. The primary key (event, consumer) is the guard that
 * no consumer is handed an event twice, whatever the relays do.
 */
@Entity({ tableName: 'event_inbox' })
@Index({
  name: 'event_inbox_pending_index',
  expression: 'create index "event_inbox_pending_index" on "event_inbox" ("consumer", "event_seq") where "processed_at" is null',
})
export class EventInboxEntry {
  [OptionalProps]?: 'createdAt' | 'processedAt';

  @ManyToOne({ entity: () => DomainEvent, ref: true, primary: true, deleteRule: 'cascade' })
  event!: Ref<DomainEvent>;

  /** The consumer's persistent name. */
  @PrimaryKey({ type: 'string', length: 64 })
  consumer!: string;

  /** The event's `seq`, copied so a consumer claims in write order from its own index. */
  @Property({ type: bigintText(), columnType: 'bigint' })
  eventSeq!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  processedAt?: Date | null = null;
}
