import { Check, Entity, Enum, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { DOCUMENT_CONTENT_TYPES, type DocumentContentType } from './customer-document.entity';

/**
 * A file a customer (or the desk) uploaded for a support conversation: its metadata. The
 * bytes, sealed as a document's are, are a row of `conversation_attachment_files` with the
 * same id, written in the same transaction. It belongs to one customer, and is free until a
 * message takes it (`message_id`, once and for good); a free attachment older than a day is
 * removed by the retention sweep.
 */
@Entity({ tableName: 'conversation_attachments' })
@Check({ name: 'conversation_attachments_size_positive', expression: 'size > 0' })
@Index({ properties: ['customerId', 'createdAt'] })
@Index({ properties: ['messageId'] })
export class ConversationAttachment extends BaseEntity<'messageId' | 'conversationId'> {
  /** The customer whose conversations it may join (the uploader, or the customer the desk wrote to). */
  @Property({ type: 'uuid' })
  customerId!: string;

  @Property({ type: 'string', length: 16 })
  uploadedByType!: 'customer' | 'staff';

  @Property({ type: 'uuid' })
  uploadedBy!: string;

  /** As the client named it; never trusted for the type. */
  @Property({ type: 'string', length: 255 })
  fileName!: string;

  @Enum({ items: [...DOCUMENT_CONTENT_TYPES], type: 'string' })
  contentType!: DocumentContentType;

  @Property({ type: 'integer' })
  size!: number;

  /** The message that carries it; null while unused. */
  @Property({ type: 'uuid', nullable: true })
  messageId?: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  conversationId?: string | null = null;
}
