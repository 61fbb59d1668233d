import { Entity, Enum, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { decimalText } from './column-types';

export const COMMISSION_TYPES = ['none', 'per_lot', 'per_deal', 'percent'] as const;
export type CommissionType = (typeof COMMISSION_TYPES)[number];

/**
 * A trading group: the terms (leverage, margin levels, commission, swaps) its accounts
 * trade under. Names are unique ignoring case, enforced by a unique index on lower(name).
 * Levels and values are `numeric`; they are terms, not balances, and travel as JSON numbers.
 */
@Entity({ tableName: 'trading_groups' })
@Index({
  name: 'trading_groups_name_ci_unique',
  expression: 'create unique index "trading_groups_name_ci_unique" on "trading_groups" (lower("name"))',
})
@Index({ properties: ['isActive', 'createdAt'] })
export class Group extends BaseEntity<'isDefault' | 'isActive' | 'maxOpenPositions' | 'maxExposure' | 'description'> {
  @Property({ type: 'string', length: 64 })
  name!: string;

  @Property({ type: 'text', nullable: true })
  description?: string | null = null;

  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Property({ type: 'integer' })
  defaultLeverage!: number;

  @Property({ type: decimalText(), columnType: 'numeric(10,4)' })
  marginCallLevel!: string;

  @Property({ type: decimalText(), columnType: 'numeric(10,4)' })
  stopoutLevel!: string;

  @Enum({ items: [...COMMISSION_TYPES], type: 'string' })
  commissionType!: CommissionType;

  @Property({ type: decimalText(), columnType: 'numeric(12,4)' })
  commissionValue!: string;

  @Property({ type: 'boolean' })
  swapEnabled!: boolean;

  @Property({ type: decimalText(), columnType: 'numeric(10,4)' })
  swapMultiplier!: string;

  @Property({ type: 'boolean' })
  swapFree!: boolean;

  @Property({ type: 'integer' })
  swapFreeDays!: number;

  @Property({ type: 'boolean' })
  isIslamic!: boolean;

  @Property({ type: decimalText(), columnType: 'numeric(20,2)', nullable: true })
  maxExposure?: string | null = null;

  @Property({ type: 'boolean' })
  netMaxExposure!: boolean;

  @Property({ type: 'integer', nullable: true })
  maxOpenPositions?: number | null = null;

  @Property({ type: 'boolean' })
  isDefault = false;

  @Property({ type: 'boolean' })
  isActive = true;
}
