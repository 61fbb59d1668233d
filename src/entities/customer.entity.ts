import { Entity, Enum, Property, Unique } from '@mikro-orm/decorators/legacy';
import { PrincipalEntity } from './principal.entity';

/**
 * What a customer may do, set by staff moderation or a fraud case: `close_only` keeps the
 * customer able to log in, close positions and withdraw, and nothing else that moves money out
 * or opens risk; `no_login` ends its sessions and refuses its logins.
 */
export const CUSTOMER_ACCESS_LEVELS = ['full', 'close_only', 'no_login'] as const;
export type CustomerAccess = (typeof CUSTOMER_ACCESS_LEVELS)[number];

@Entity({ tableName: 'customers' })
export class Customer extends PrincipalEntity<'locale' | 'country' | 'affiliateId' | 'verificationLevel' | 'access'> {
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
   * 0 to 3 (decisions, section 16): what the customer may do is the matching row of
   * verification_levels. Raised by approved documents (domain/compliance) or set by staff.
   */
  @Property({ type: 'smallint', default: 0 })
  verificationLevel: number = 0;

  @Enum({ items: [...CUSTOMER_ACCESS_LEVELS], type: 'string', default: 'full' })
  access: CustomerAccess = 'full';
}
