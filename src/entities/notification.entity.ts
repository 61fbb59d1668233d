import { Entity, Index, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/**
 * A customer's notification, made by the notifications consumer from one domain event (at
 * most one per event: `eventId` is unique). `createdAt` is the event's time.
 */
@Entity({ tableName: 'notifications' })
@Index({ properties: ['customerId', 'createdAt'] })
@Index({
  name: 'notifications_unread_index',
  expression: `create index "notifications_unread_index" on "notifications" ("customer_id") where "read_at" is null`,
})
export class Notification extends BaseEntity<'readAt'> {
  @Property({ type: 'uuid' })
  customerId!: string;

  @Property({ type: 'uuid' })
  @Unique()
  eventId!: string;

  /** The event type it tells about (`withdrawal.approved`). */
  @Property({ type: 'string', length: 64 })
  type!: string;

  @Property({ type: 'string', length: 200 })
  title!: string;

  @Property({ type: 'text' })
  body!: string;

  /** What the customer may see of the event's data: its type's projection (notifications.ts), never the whole event. */
  @Property({ type: 'json' })
  data!: Record<string, unknown>;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  readAt?: Date | null = null;
}
