import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * The data encryption key of a deployment without DATA_ENCRYPTION_KEYS, outside production
 * only: created by the first process that starts (domain/secrets/development-key.ts) and read
 * by every other, so secrets one local process seals another can open. A key stored beside
 * the data it protects protects nothing: production refuses to start without the variable.
 */
@Entity({ tableName: 'development_data_keys' })
export class DevelopmentDataKey {
  @PrimaryKey({ type: 'string', length: 32 })
  id!: string;

  /** 32 random bytes, base64. */
  @Property({ type: 'text' })
  key!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  createdAt: Date = new Date();
}
