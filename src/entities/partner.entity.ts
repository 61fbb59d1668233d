import { Entity, Index, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { bigintText, decimalText, MONEY_COLUMN } from './column-types';

export const IB_BASES = ['commission_pct', 'per_lot', 'spread_pct'] as const;
export type IbBasis = (typeof IB_BASES)[number];
export const IB_CHARGES = ['instant', 'daily'] as const;
export type IbCharge = (typeof IB_CHARGES)[number];

/** One level's value of a plan: a percent (commission_pct, spread_pct) or money per lot (per_lot). */
export interface IbLevelValue {
  level: number;
  value: string;
}

/** How an introducing broker is paid for the orders of the clients below it. */
@Entity({ tableName: 'ib_plans' })
export class IbPlan extends BaseEntity<'maxPerLot' | 'groupIds' | 'symbolOverrides' | 'minHoldSeconds'> {
  @Property({ type: 'string', length: 200 })
  name!: string;

  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Property({ type: 'string', length: 16 })
  basis!: IbBasis;

  @Property({ type: 'json' })
  levels!: IbLevelValue[];

  /** per_lot only: the sum across levels of one lot's rewards never passes it. */
  @Property({ type: decimalText(), columnType: MONEY_COLUMN, nullable: true })
  maxPerLot?: string | null = null;

  /** The groups whose orders accrue; null: every group. */
  @Property({ type: 'json', nullable: true })
  groupIds?: string[] | null = null;

  @Property({ type: 'json', nullable: true })
  symbolOverrides?: Record<string, IbLevelValue[]> | null = null;

  @Property({ type: 'string', length: 8 })
  charge!: IbCharge;

  @Property({ type: 'int', default: 60 })
  minHoldSeconds: number = 60;
}

/** A customer who introduces clients: its code, its place in the tree and its plan. */
@Entity({ tableName: 'partners' })
export class Partner extends BaseEntity<'parentPartnerId'> {
  @Property({ type: 'uuid', unique: true })
  customerId!: string;

  @Property({ type: 'uuid', nullable: true })
  @Index()
  parentPartnerId?: string | null = null;

  @Property({ type: 'uuid' })
  planId!: string;

  /** Unique whatever its case: clients type it in a link or a form. */
  @Property({ type: 'string', length: 32, unique: true })
  code!: string;
}

export const ACCRUAL_STATUSES = ['accrued', 'paid', 'on_hold', 'excluded', 'void', 'reversed'] as const;
export type AccrualStatus = (typeof ACCRUAL_STATUSES)[number];

/** What one closed order earned one partner at one level of its chain: an order accrues once. */
@Entity({ tableName: 'ib_accruals' })
@Unique({ properties: ['ticket', 'partnerId', 'level'] })
@Index({ properties: ['partnerId', 'status'] })
@Index({ properties: ['clientCustomerId', 'closedAt'] })
export class IbAccrual extends BaseEntity<'reason' | 'paymentId' | 'paidAt'> {
  @Property({ type: bigintText(), columnType: 'bigint' })
  ticket!: string;

  @Property({ type: 'uuid' })
  partnerId!: string;

  @Property({ type: 'smallint' })
  level!: number;

  @Property({ type: 'uuid' })
  planId!: string;

  @Property({ type: 'uuid' })
  clientCustomerId!: string;

  @Property({ type: bigintText(), columnType: 'bigint' })
  login!: string;

  @Property({ type: 'string', length: 32 })
  symbol!: string;

  @Property({ type: decimalText(), columnType: 'numeric(20,2)' })
  lots!: string;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  amount!: string;

  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Property({ type: 'string', length: 16 })
  status!: AccrualStatus;

  @Property({ type: 'string', length: 32, nullable: true })
  reason?: string | null = null;

  @Property({ type: 'string', length: 8 })
  charge!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  closedAt!: Date;

  /** The daily payment that paid it (null for an instant payment or one not paid yet). */
  @Property({ type: 'uuid', nullable: true })
  paymentId?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  paidAt?: Date | null = null;
}

/** The end of day's one payment of a partner's accrued rewards for one trading date. */
@Entity({ tableName: 'ib_payments' })
@Unique({ properties: ['partnerId', 'tradingDate'] })
export class IbPayment extends BaseEntity {
  @Property({ type: 'uuid' })
  partnerId!: string;

  @Property({ type: 'date' })
  tradingDate!: string;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  amount!: string;

  @Property({ type: 'integer' })
  accruals!: number;
}
