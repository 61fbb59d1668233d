import { Entity, Enum, Index, Property } from '@mikro-orm/core';
import { BaseEntity } from './base.entity';

export type PrincipalType = 'user' | 'customer';

/** One login. Its refresh tokens rotate inside it; revoking it kills every token it issued. */
@Entity({ tableName: 'sessions' })
@Index({ properties: ['principalType', 'principalId'] })
export class Session extends BaseEntity<'lastUsedAt' | 'revokedAt' | 'revokedReason' | 'ip' | 'userAgent'> {
  @Enum({ items: ['user', 'customer'], type: 'string' })
  principalType!: PrincipalType;

  @Property({ type: 'uuid' })
  principalId!: string;

  @Property({ type: 'string', length: 64, nullable: true })
  ip?: string | null = null;

  @Property({ type: 'string', length: 512, nullable: true })
  userAgent?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  lastUsedAt: Date = new Date();

  /** The session ends when its refresh tokens do: each refresh pushes this forward. */
  @Property({ type: 'datetime', columnType: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  revokedAt?: Date | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  revokedReason?: string | null = null;
}
