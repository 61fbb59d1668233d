import { Entity, Index, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/**
 * A self-registration waiting for its confirmation mail to be used: what the customer sent,
 * with the password already hashed, and the link's token kept only as its SHA-256. Valid 24
 * hours, used once; the customer and its wallet are created when it is used.
 */
@Entity({ tableName: 'pending_registrations' })
@Index({ properties: ['email'] })
export class PendingRegistration extends BaseEntity<
  'phone' | 'partnerCode' | 'promoCode' | 'deviceId' | 'clientIp' | 'usedAt' | 'customerId' | 'fraudEvaluationId'
> {
  @Property({ type: 'string', length: 320 })
  email!: string;

  @Property({ type: 'string', length: 255, hidden: true })
  passwordHash!: string;

  @Property({ type: 'string', length: 100 })
  firstName!: string;

  @Property({ type: 'string', length: 100 })
  lastName!: string;

  @Property({ type: 'string', length: 2 })
  country!: string;

  @Property({ type: 'string', length: 16 })
  locale!: string;

  @Property({ type: 'string', length: 32, nullable: true })
  phone?: string | null = null;

  @Property({ type: 'string', length: 255, nullable: true })
  partnerCode?: string | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  promoCode?: string | null = null;

  @Property({ type: 'string', length: 200, nullable: true })
  deviceId?: string | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  clientIp?: string | null = null;

  @Property({ type: 'string', length: 64 })
  @Unique()
  tokenHash!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  expiresAt!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  usedAt?: Date | null = null;

  /** A `review` of the sign-up's fraud evaluation: the customer is created `close_only`, with a case. */
  @Property({ type: 'uuid', nullable: true })
  fraudEvaluationId?: string | null = null;

  /** The customer the confirmation created. */
  @Property({ type: 'uuid', nullable: true })
  customerId?: string | null = null;
}
