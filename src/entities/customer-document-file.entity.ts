import { type Ref } from '@mikro-orm/core';
import { Entity, OneToOne, Property } from '@mikro-orm/decorators/legacy';
import { CustomerDocument } from './customer-document.entity';

/**
 * The sealed bytes of one document: AES-256-GCM under the data key `keyId` (a subkey for
 * documents), `content` being the 12-byte IV, the ciphertext and the 16-byte tag. Kept apart
 * from the metadata so that listing documents never reads a file. Written and read only
 * through domain/compliance (raw statements: the bytes never enter an identity map).
 */
@Entity({ tableName: 'customer_document_files' })
export class CustomerDocumentFile {
  @OneToOne({ entity: () => CustomerDocument, primary: true, ref: true, deleteRule: 'cascade' })
  document!: Ref<CustomerDocument>;

  /** The id of the data key that sealed `content` (what the re-seal job moves). */
  @Property({ type: 'string', length: 32 })
  keyId!: string;

  @Property({ type: 'blob', columnType: 'bytea', lazy: true })
  content!: Buffer;
}
