import { type Ref } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { PrincipalEntity } from './principal.entity';
import { decimalText, MONEY_COLUMN } from './column-types';
import { StaffUser } from './staff-user.entity';
import { Team } from './team.entity';

/** The system-managed stages of a customer, in their order (see docs/crm.md). */
export const LIFECYCLE_STAGES = ['lead', 'registered', 'verified', 'funded', 'active', 'dormant', 'closed'] as const;
export type LifecycleStage = (typeof LIFECYCLE_STAGES)[number];

/** What a customer adds to a principal besides its names, for `em.create` to default. */
type CustomerDefaults =
  | 'lifecycle'
  | 'ftdAt'
  | 'ftdAmount'
  | 'salesStatus'
  | 'phone'
  | 'leadSource'
  | 'leadCampaign'
  | 'partnerCode'
  | 'partnerId'
  | 'promoCode'
  | 'signupDeviceId'
  | 'closedAt'
  | 'closeReason'
  | 'accountManager'
  | 'team';

/**
 * What a customer may do, set by staff moderation or a fraud case: `close_only` keeps the
 * customer able to log in, close positions and withdraw, and nothing else that moves money out
 * or opens risk; `no_login` ends its sessions and refuses its logins.
 */
export const CUSTOMER_ACCESS_LEVELS = ['full', 'close_only', 'no_login'] as const;
export type CustomerAccess = (typeof CUSTOMER_ACCESS_LEVELS)[number];

@Entity({ tableName: 'customers' })
export class Customer extends PrincipalEntity<
  'locale' | 'country' | 'affiliateId' | 'verificationLevel' | 'access' | CustomerDefaults
> {
  @Property({ type: 'string', length: 320 })
  @Unique()
  declare email: string;

  @Property({ type: 'string', length: 100 })
  firstName!: string;

  @Property({ type: 'string', length: 100 })
  lastName!: string;

  @Property({ type: 'string', length: 16 })
  locale: string = 'en';

  /** ISO 3166-1 alpha-2, or null when unknown. */
  @Property({ type: 'string', length: 2, nullable: true })
  country?: string | null = null;

  /** The affiliate the customer came through, as staff typed it; webhooks with this affiliate_id get its events. */
  @Property({ type: 'string', length: 255, nullable: true })
  affiliateId?: string | null = null;

  /**
   * 0 to 3: what the customer may do is the matching row of
   * verification_levels. Raised by approved documents (domain/compliance) or set by staff.
   */
  @Property({ type: 'smallint', default: 0 })
  verificationLevel: number = 0;

  @Enum({ items: [...CUSTOMER_ACCESS_LEVELS], type: 'string', default: 'full' })
  access: CustomerAccess = 'full';
  /**
   * Derived from the domain events by the lifecycle consumer and the end of day, never set by
   * hand except `closed`: it only moves forward (active and dormant alternate).
   */
  @Property({ type: 'string', length: 16, default: 'registered' })
  lifecycle: LifecycleStage = 'registered';

  /** The first completed deposit: when, and how much (in the account's currency). */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  ftdAt?: Date | null = null;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN, nullable: true })
  ftdAmount?: string | null = null;

  /** A key of the broker's sales statuses, set by staff; null when none. */
  @Property({ type: 'string', length: 64, nullable: true })
  salesStatus?: string | null = null;

  @Property({ type: 'string', length: 32, nullable: true })
  phone?: string | null = null;

  @Property({ type: 'string', length: 255, nullable: true })
  leadSource?: string | null = null;

  @Property({ type: 'string', length: 255, nullable: true })
  leadCampaign?: string | null = null;

  /** The partner code a sign-up or lead came with, kept for the partner programmes. */
  @Property({ type: 'string', length: 255, nullable: true })
  partnerCode?: string | null = null;

  /** The partner the customer is attributed to (its affiliate_id is that partner's code). */
  @Property({ type: 'uuid', nullable: true })
  @Index()
  partnerId?: string | null = null;

  /** The promo code given at sign-up, kept until promo codes are applied to it. */
  @Property({ type: 'string', length: 64, nullable: true })
  promoCode?: string | null = null;

  /** The `X-Device-Id` the sign-up came with. */
  @Property({ type: 'string', length: 200, nullable: true })
  signupDeviceId?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  closedAt?: Date | null = null;

  @Property({ type: 'string', length: 1000, nullable: true })
  closeReason?: string | null = null;
  /** The staff user who manages the customer: `own`-scope staff see exactly the customers they manage. */
  @ManyToOne({ entity: () => StaffUser, ref: true, nullable: true, deleteRule: 'set null' })
  @Index()
  accountManager?: Ref<StaffUser> | null = null;

  /** The customer's team: `team`-scope staff see the customers of their teams (a lead, of the teams below too). */
  @ManyToOne({ entity: () => Team, ref: true, nullable: true, deleteRule: 'set null' })
  @Index()
  team?: Ref<Team> | null = null;
}
