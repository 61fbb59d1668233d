import { Entity, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { bigintText, decimalText, MONEY_COLUMN } from './column-types';

export const REDEMPTION_STATUSES = ['applied', 'armed', 'on_hold', 'expired', 'void'] as const;
export type RedemptionStatus = (typeof REDEMPTION_STATUSES)[number];

/**
 * One customer's use of a promo code: `applied` (bonus granted), `armed` (its bonus `pending`
 * until a qualifying deposit), `on_hold` (held for a fraud review), `expired` (the code expired
 * while armed) or `void` (a review found fraud, or the bonus was ended before it was granted).
 */
@Entity({ tableName: 'promo_redemptions' })
@Index({ properties: ['promoCodeId', 'customerId'] })
@Index({ properties: ['customerId', 'status'] })
export class PromoRedemption extends BaseEntity<'login' | 'bonusId' | 'cost'> {
  @Property({ type: 'uuid' })
  promoCodeId!: string;

  @Property({ type: 'string', length: 32 })
  code!: string;

  @Property({ type: 'uuid' })
  customerId!: string;

  /** The account named at redeem (null: the first eligible one at the qualifying deposit). */
  @Property({ type: bigintText(), columnType: 'bigint', nullable: true })
  login?: string | null = null;

  @Property({ type: 'string', length: 16 })
  status!: RedemptionStatus;

  @Property({ type: 'uuid', nullable: true })
  bonusId?: string | null = null;

  /** The bonus money granted by it (what a `spend` budget counts). */
  @Property({ type: decimalText(), columnType: MONEY_COLUMN, default: 0 })
  cost: string = '0';
}
