import { Entity, Index, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/** A refresh token, kept only as its SHA-256: single use, bound to its session. */
@Entity({ tableName: 'refresh_tokens' })
@Index({ properties: ['sessionId'] })
export class RefreshToken extends BaseEntity<'usedAt'> {
  @Property({ type: 'uuid' })
  sessionId!: string;

  @Property({ type: 'string', length: 64 })
  @Unique()
  tokenHash!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  usedAt?: Date | null = null;
}
