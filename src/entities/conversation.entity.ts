import { Entity, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

export const CONVERSATION_STATUSES = ['open', 'pending', 'snoozed', 'resolved'] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];
export const CONVERSATION_CATEGORIES = ['account', 'payments', 'trading', 'verification', 'other'] as const;
export const CONVERSATION_PRIORITIES = ['low', 'medium', 'high', 'urgent'] as const;
export const CONVERSATION_REF_TYPES = ['withdrawal', 'deposit', 'document', 'payout', 'order'] as const;

/** A support conversation between one customer and the desk, optionally about one of the customer's objects. */
@Entity({ tableName: 'conversations' })
@Index({ properties: ['customerId', 'createdAt'] })
@Index({ properties: ['status', 'updatedAt'] })
export class Conversation extends BaseEntity<
  | 'category'
  | 'refType'
  | 'refId'
  | 'status'
  | 'priority'
  | 'assigneeId'
  | 'snoozedUntil'
  | 'resolvedAt'
  | 'firstResponseAt'
  | 'slaBreachedAt'
  | 'lastCustomerMessageAt'
  | 'statusChangedAt'
> {
  @Property({ type: 'uuid' })
  customerId!: string;

  @Property({ type: 'string', length: 200 })
  subject!: string;

  @Property({ type: 'string', length: 16, nullable: true })
  category?: string | null = null;

  @Property({ type: 'string', length: 16, nullable: true })
  refType?: string | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  refId?: string | null = null;

  @Property({ type: 'string', length: 16, default: 'open' })
  status: ConversationStatus = 'open';

  @Property({ type: 'string', length: 16, nullable: true })
  priority?: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  assigneeId?: string | null = null;

  /** Who started it: the customer or a staff user. */
  @Property({ type: 'string', length: 16 })
  startedBy!: 'customer' | 'staff';

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  snoozedUntil?: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  resolvedAt?: Date | null = null;

  /** When the status last changed: a pending conversation is resolved after a quiet week from here. */
  @Property({ type: 'datetime', columnType: 'timestamptz' })
  statusChangedAt: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  firstResponseDueAt!: Date;

  /** The first public staff message; internal notes do not count. */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  firstResponseAt?: Date | null = null;

  /** Set once, when the breach is reported, so it is reported once. */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  slaBreachedAt?: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  lastCustomerMessageAt?: Date | null = null;
}
