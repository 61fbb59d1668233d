import { ArrayType } from '@mikro-orm/core';
import { Entity, Index, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/**
 * A long-lived token for machine integrations. The token text is shown once; only its
 * SHA-256 is kept (256 random bits need no slow hash). Scopes are permission names.
 */
@Entity({ tableName: 'api_tokens' })
@Index({ properties: ['issuedById'] })
export class ApiToken extends BaseEntity<'expiresAt' | 'revokedAt' | 'lastUsedAt'> {
  @Property({ type: 'string', length: 100 })
  name!: string;

  @Property({ type: 'string', length: 64, hidden: true })
  @Unique()
  tokenHash!: string;

  /** The first characters of the token, so people can tell their tokens apart. */
  @Property({ type: 'string', length: 16 })
  tokenPrefix!: string;

  @Property({ type: ArrayType, columnType: 'text[]' })
  scopes: string[] = [];

  @Property({ type: 'uuid' })
  issuedById!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  expiresAt?: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  revokedAt?: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  lastUsedAt?: Date | null = null;
}
