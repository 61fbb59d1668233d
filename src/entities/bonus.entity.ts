import { Entity, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { bigintText, decimalText, MONEY_COLUMN } from './column-types';

export const BONUS_STATUSES = ['pending', 'active', 'completed', 'expired', 'forfeited', 'cancelled'] as const;
export type BonusStatus = (typeof BONUS_STATUSES)[number];
export const BONUS_SOURCES = ['deposit', 'promo', 'manual'] as const;

/**
 * One bonus granted to one trading account. While `active` its unreleased part
 * (amount - released) sits in the account's credit; the terminal states free it with
 * `credit_out`. Written by SQL from the posting hooks (src/domain/bonuses), under the
 * account's lock.
 */
@Entity({ tableName: 'bonuses' })
@Index({ properties: ['accountId', 'status'] })
@Index({ properties: ['customerId'] })
export class Bonus extends BaseEntity<'released' | 'lotsDone' | 'expiresAt' | 'sourceId' | 'endReason'> {
  @Property({ type: 'uuid' })
  programId!: string;

  @Property({ type: 'uuid' })
  customerId!: string;

  @Property({ type: 'uuid' })
  accountId!: string;

  @Property({ type: bigintText(), columnType: 'bigint' })
  login!: string;

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
}
