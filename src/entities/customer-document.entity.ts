import { type Ref } from '@mikro-orm/core';
import { Check, Entity, Enum, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { Customer } from './customer.entity';

export const DOCUMENT_TYPES = ['identity', 'address', 'selfie', 'payment_method'] as const;
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

export const DOCUMENT_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type DocumentStatus = (typeof DOCUMENT_STATUSES)[number];

/** The media types a document may be, recognised from its content (domain/compliance/file-kind.ts). */
export const DOCUMENT_CONTENT_TYPES = ['application/pdf', 'image/jpeg', 'image/png'] as const;
export type DocumentContentType = (typeof DOCUMENT_CONTENT_TYPES)[number];

/**
 * A document a customer submitted for verification: its metadata. The file itself, sealed,
 * is a row of `customer_document_files` with the same id, written in the same transaction:
 * a document never exists without its file, nor a file without its document. `pending`
 * until staff approve or reject it; both are terminal.
 */
@Entity({ tableName: 'customer_documents' })
@Check({
  name: 'customer_documents_decision',
  expression: `(status = 'pending') = (decided_at is null) and (status = 'rejected') = (reason is not null)`,
})
@Check({ name: 'customer_documents_size_positive', expression: 'size > 0' })
@Index({ properties: ['customer', 'createdAt'] })
export class CustomerDocument extends BaseEntity<'status' | 'reason' | 'decidedAt' | 'decidedBy'> {
  @ManyToOne({ entity: () => Customer, ref: true, deleteRule: 'restrict' })
  customer!: Ref<Customer>;

  @Enum({ items: [...DOCUMENT_TYPES], type: 'string' })
  type!: DocumentType;

  @Enum({ items: [...DOCUMENT_STATUSES], type: 'string' })
  status: DocumentStatus = 'pending';

  /** As the client named it (the last path segment, control characters removed); never trusted for the type. */
  @Property({ type: 'string', length: 255 })
  fileName!: string;

  @Enum({ items: [...DOCUMENT_CONTENT_TYPES], type: 'string' })
  contentType!: DocumentContentType;

  /** Bytes of the file as submitted (before sealing). */
  @Property({ type: 'integer' })
  size!: number;

  /** Why staff rejected it; null otherwise. */
  @Property({ type: 'string', length: 500, nullable: true })
  reason?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  decidedAt?: Date | null = null;

  /** The staff user who decided (for an API token, the user who issued it). */
  @Property({ type: 'uuid', nullable: true })
  decidedBy?: string | null = null;
}
