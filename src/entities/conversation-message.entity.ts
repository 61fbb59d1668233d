import { Entity, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/** One message of a conversation; an `internal` one is a staff note no customer surface shows. */
@Entity({ tableName: 'conversation_messages' })
@Index({ properties: ['conversationId', 'createdAt'] })
@Index({ properties: ['customerId', 'authorType', 'createdAt'] })
export class ConversationMessage extends BaseEntity<'internal' | 'attachmentIds' | 'authorId'> {
  @Property({ type: 'uuid' })
  conversationId!: string;

  /** The conversation's customer, kept on each message so the customer's message rate is one index range. */
  @Property({ type: 'uuid' })
  customerId!: string;

  @Property({ type: 'string', length: 16 })
  authorType!: 'customer' | 'staff';

  /** The customer or staff user who wrote it. */
  @Property({ type: 'uuid', nullable: true })
  authorId?: string | null = null;

  @Property({ type: 'text' })
  body!: string;

  @Property({ type: 'boolean', default: false })
  internal: boolean = false;

  @Property({ type: 'json' })
  attachmentIds: string[] = [];
}
