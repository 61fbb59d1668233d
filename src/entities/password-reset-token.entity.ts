import { Entity, Index, Property, Unique } from '@mikro-orm/core';
import { BaseEntity } from './base.entity';

/**
 * A customer's password-reset token, kept only as its SHA-256: valid one hour, single use.
 * Setting a new password consumes every outstanding token of the customer.
 */
@Entity({ tableName: 'password_reset_tokens' })
@Index({ properties: ['customerId'] })
export class PasswordResetToken extends BaseEntity<'usedAt'> {
  @Property({ type: 'uuid' })
  customerId!: string;

  @Property({ type: 'string', length: 64 })
  @Unique()
  tokenHash!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  usedAt?: Date | null = null;
}
