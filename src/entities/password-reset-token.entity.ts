import { Entity, Index, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/**
 * A customer's password-reset token, kept only as its SHA-256: valid one hour, single use.
 * Setting a new password consumes every outstanding token of the customer. `requestId` is the
 * reset request that made it (the job's payload): unique, so a job that runs again after a
 * retry finds its token already made and mails nothing twice.
 */
@Entity({ tableName: 'password_reset_tokens' })
@Index({ properties: ['customerId'] })
export class PasswordResetToken extends BaseEntity<'usedAt' | 'requestId'> {
  @Property({ type: 'uuid' })
  customerId!: string;

  @Property({ type: 'string', length: 64 })
  @Unique()
  tokenHash!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  expiresAt!: Date;

  /** Null for tokens made before requests were handled by a job. */
  @Property({ type: 'uuid', nullable: true })
  @Unique()
  requestId?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  usedAt?: Date | null = null;
}
