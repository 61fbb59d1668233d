import { Entity, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { decimalText, MONEY_COLUMN } from './column-types';

export const BONUS_KINDS = ['fixed', 'deposit_percent'] as const;
export const BONUS_TRIGGERS = ['manual', 'deposit', 'promo_code'] as const;
export const BONUS_RELEASE_MODES = ['on_target', 'per_lot'] as const;
export const BONUS_TRANSFER_OUT_RULES = ['forfeit', 'proportional'] as const;

/**
 * A bonus programme: what a bonus grants (a fixed amount, or a percentage of the qualifying
 * deposit up to a cap), to which accounts (their groups), on what trigger, and how it turns
 * into withdrawable money (lots traded per unit of bonus, released at the target or per lot).
 */
@Entity({ tableName: 'bonus_programs' })
export class BonusProgram extends BaseEntity<
  'amount' | 'percent' | 'maxAmount' | 'minDeposit' | 'startsAt' | 'endsAt' | 'lifetimeDays'
> {
  @Property({ type: 'string', length: 200 })
  name!: string;

  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Property({ type: 'string', length: 16 })
  kind!: (typeof BONUS_KINDS)[number];

  @Property({ type: decimalText(), columnType: MONEY_COLUMN, nullable: true })
  amount?: string | null = null;

  @Property({ type: decimalText(), columnType: 'numeric(9,4)', nullable: true })
  percent?: string | null = null;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN, nullable: true })
  maxAmount?: string | null = null;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN, nullable: true })
  minDeposit?: string | null = null;

  @Property({ type: 'json' })
  groupIds!: string[];

  @Property({ type: 'string', length: 16 })
  trigger!: (typeof BONUS_TRIGGERS)[number];

  @Property({ type: 'boolean' })
  firstDepositOnly!: boolean;

  @Property({ type: 'string', length: 16 })
  releaseMode!: (typeof BONUS_RELEASE_MODES)[number];

  /** Lots to trade per unit of bonus currency: lots required = amount x lots_per_unit. */
  @Property({ type: decimalText(), columnType: 'numeric(20,6)' })
  lotsPerUnit!: string;

  @Property({ type: 'integer', nullable: true })
  lifetimeDays?: number | null = null;

  @Property({ type: 'string', length: 16 })
  onTransferOut!: (typeof BONUS_TRANSFER_OUT_RULES)[number];

  @Property({ type: 'integer' })
  minHoldSeconds!: number;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  startsAt?: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  endsAt?: Date | null = null;

  @Property({ type: 'boolean' })
  enabled!: boolean;
}
