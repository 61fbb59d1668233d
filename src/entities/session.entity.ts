import { Entity, Enum, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

export type PrincipalType = 'user' | 'customer';

/**
 * `api`: a login on the API, whose access tokens are signed and whose refresh tokens rotate.
 * `dashboard`: a sign-in on the queue dashboard, whose one credential is its cookie.
 */
export type SessionKind = 'api' | 'dashboard';

/** One login. Its refresh tokens rotate inside it; revoking it kills every token it issued. */
@Entity({ tableName: 'sessions' })
@Index({ properties: ['principalType', 'principalId'] })
export class Session extends BaseEntity<
  'lastUsedAt' | 'revokedAt' | 'revokedReason' | 'ip' | 'userAgent' | 'kind' | 'secretHash'
> {
  @Enum({ items: ['user', 'customer'], type: 'string' })
  principalType!: PrincipalType;

  @Enum({ items: ['api', 'dashboard'], type: 'string', default: 'api' })
  kind: SessionKind = 'api';

  /** A dashboard session's cookie value as SHA-256 hex; the value itself is never stored. */
  @Property({ type: 'string', length: 64, nullable: true, unique: true })
  secretHash?: string | null = null;

  @Property({ type: 'uuid' })
  principalId!: string;

  @Property({ type: 'string', length: 64, nullable: true })
  ip?: string | null = null;

  @Property({ type: 'string', length: 512, nullable: true })
  userAgent?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  lastUsedAt: Date = new Date();

  /**
   * The session ends when its refresh tokens do: each refresh pushes this forward. A dashboard
   * session's: the sooner of its idle timeout from the last request and its absolute limit.
   */
  @Property({ type: 'datetime', columnType: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  revokedAt?: Date | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  revokedReason?: string | null = null;
}
