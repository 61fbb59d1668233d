import { Entity, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { bigintText, decimalText, MONEY_COLUMN } from './column-types';

export const BONUS_STATUSES = ['pending', 'on_hold', 'active', 'completed', 'expired', 'forfeited', 'cancelled'] as const;
export type BonusStatus = (typeof BONUS_STATUSES)[number];
export const BONUS_SOURCES = ['deposit', 'promo', 'manual'] as const;

/**
 * One bonus granted to one trading account. While `active` its unreleased part
 * (amount - released) sits in the account's credit; the terminal states free it with
 * `credit_out`. A `pending` bonus (a promo code armed until a qualifying deposit) and an
 * `on_hold` one (held for a fraud review) have booked no credit yet; a pending one may have no
 * account until that deposit names it. Written by SQL from the posting hooks (src/domain/bonuses), under the
 * account's lock.
 */
@Entity({ tableName: 'bonuses' })
@Index({ properties: ['accountId', 'status'] })
@Index({ properties: ['customerId'] })
@Index({ properties: ['customerId', 'status'] })
export class Bonus extends BaseEntity<
  'accountId' | 'login' | 'released' | 'lotsDone' | 'expiresAt' | 'sourceId' | 'endReason' | 'holdTo'
> {
  @Property({ type: 'uuid' })
  programId!: string;

  @Property({ type: 'uuid' })
  customerId!: string;

  @Property({ type: 'uuid', nullable: true })
  accountId?: string | null = null;

  @Property({ type: bigintText(), columnType: 'bigint', nullable: true })
  login?: string | null = null;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  amount!: string;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN, default: 0 })
  released: string = '0';

  @Property({ type: decimalText(), columnType: 'numeric(20,2)' })
  lotsRequired!: string;

  @Property({ type: decimalText(), columnType: 'numeric(20,2)', default: 0 })
  lotsDone: string = '0';

  @Property({ type: 'string', length: 16 })
  status!: BonusStatus;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  expiresAt?: Date | null = null;

  @Property({ type: 'string', length: 16 })
  sourceType!: (typeof BONUS_SOURCES)[number];

  @Property({ type: 'string', length: 64, nullable: true })
  sourceId?: string | null = null;

  @Property({ type: 'string', length: 500, nullable: true })
  endReason?: string | null = null;

  /** While `on_hold`: what the bonus becomes when the review releases it (`pending` or `active`). */
  @Property({ type: 'string', length: 16, nullable: true })
  holdTo?: 'pending' | 'active' | null = null;
}
