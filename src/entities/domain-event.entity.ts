import { Entity, Index, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { bigintText } from './column-types';

/**
 * The outbox: every state change that others may want to hear about (webhooks,
 * notifications) writes one row here in its own transaction. The outbox relay
 * (domain/events/relay.ts) hands each row to the consumers that want it, writing their
 * `event_inbox` rows and `published_at` in one transaction; nothing is lost between a
 * commit and a send.
 */
@Entity({ tableName: 'domain_events' })
@Index({
  name: 'domain_events_unpublished_seq_index',
  expression: 'create index "domain_events_unpublished_seq_index" on "domain_events" ("seq") where "published_at" is null',
})
@Index({
  name: 'domain_events_publication_seq_unique',
  expression: 'create unique index "domain_events_publication_seq_unique" on "domain_events" ("publication_seq")',
})
@Index({
  name: 'domain_events_customer_created_index',
  expression:
    'create index "domain_events_customer_created_index" on "domain_events" ("customer_id", "created_at") where "customer_id" is not null',
})
export class DomainEvent extends BaseEntity<'seq' | 'publishedAt' | 'publicationSeq' | 'customerId'> {
  /**
   * Write order: drawn from a sequence when the row is inserted, so events written under one
   * lock (an account's, an order's) are numbered in the order they were written. created_at
   * cannot say it: the rows of one transaction share it. Consumers order by this.
   */
  @Property({ type: bigintText(), columnType: 'bigint', defaultRaw: "nextval('domain_event_seq')" })
  @Unique()
  seq!: string;

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

  /** `json`, not `jsonb`: the text as written, so the fields keep the REST view's order. */
  @Property({ type: 'json', columnType: 'json' })
  data!: Record<string, unknown>;

  /** Set by the relay in the transaction that wrote the event's inbox rows. */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  publishedAt?: Date | null = null;

  /**
   * Publication order, set with publishedAt: the order the relay handed events over in, which
   * is the order live streams carry them (write order is not commit order). A resuming stream
   * replays by this, so an event that committed after a later-numbered one is not skipped.
   */
  @Property({ type: bigintText(), columnType: 'bigint', nullable: true })
  publicationSeq?: string | null = null;
}
