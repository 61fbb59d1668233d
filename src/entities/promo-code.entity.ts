import { Entity, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { decimalText, MONEY_COLUMN } from './column-types';

/**
 * A promo code: upper-case text (codes compare case-insensitively), unique among active codes,
 * rewarding a bonus of its programme. `redemptions` counts under the code's row lock against
 * `max_redemptions`. Used codes are never deleted, only deactivated.
 */
@Entity({ tableName: 'promo_codes' })
@Index({
  name: 'promo_codes_active_code',
  expression: `create unique index "promo_codes_active_code" on "promo_codes" ("code") where "active"`,
})
export class PromoCode extends BaseEntity<
  'campaignId' | 'maxRedemptions' | 'redemptions' | 'expiresAt' | 'minDeposit' | 'countries' | 'partnerId' | 'active'
> {
  @Property({ type: 'string', length: 32 })
  code!: string;

  @Property({ type: 'uuid', nullable: true })
  campaignId?: string | null = null;

  @Property({ type: 'uuid' })
  bonusProgramId!: string;

  @Property({ type: 'integer', nullable: true })
  maxRedemptions?: number | null = null;

  @Property({ type: 'integer', default: 0 })
  redemptions: number = 0;

  @Property({ type: 'integer' })
  maxPerCustomer!: number;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  expiresAt?: Date | null = null;

  @Property({ type: 'boolean' })
  firstDepositOnly!: boolean;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN, nullable: true })
  minDeposit?: string | null = null;

  @Property({ type: 'json', nullable: true })
  countries?: string[] | null = null;

  /** The partner (IB) the code attributes its customers to. */
  @Property({ type: 'string', length: 64, nullable: true })
  partnerId?: string | null = null;

  @Property({ type: 'boolean', default: true })
  active: boolean = true;
}
