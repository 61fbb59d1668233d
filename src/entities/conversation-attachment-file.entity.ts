import { type Ref } from '@mikro-orm/core';
import { Entity, OneToOne, Property } from '@mikro-orm/decorators/legacy';
import { ConversationAttachment } from './conversation-attachment.entity';

/**
 * The sealed bytes of one attachment, as a document's file is kept (customer-document-file):
 * AES-256-GCM under the data key `keyId`, apart from the metadata, written and read only
 * through raw statements of domain/conversations, and moved by the re-seal job.
 */
@Entity({ tableName: 'conversation_attachment_files' })
export class ConversationAttachmentFile {
  @OneToOne({ entity: () => ConversationAttachment, primary: true, ref: true, deleteRule: 'cascade' })
  attachment!: Ref<ConversationAttachment>;

  @Property({ type: 'string', length: 32 })
  keyId!: string;

  @Property({ type: 'blob', columnType: 'bytea', lazy: true })
  content!: Buffer;
}
