import { type Ref } from '@mikro-orm/core';
import { Entity, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { decimalText, MONEY_COLUMN } from './column-types';
import { Group } from './group.entity';

/** One phase's rules as a program stores them. Percentages are decimal text. */
export interface PropPhase {
  name: string;
  profit_target_pct: string;
  max_daily_loss_pct: string;
  max_total_loss_pct: string;
  total_loss_mode: 'static' | 'trailing';
  min_trading_days: number;
  max_trading_days: number | null;
}

/**
 * A prop challenge program: what a trader buys. Every phase, and the funded stage after the
 * last, trades a new `prop` account of `group` funded with `initialBalance` in `currency`.
 * Programs are not edited once challenges run on them: each challenge copies its phase's rules.
 */
@Entity({ tableName: 'prop_programs' })
export class PropProgram extends BaseEntity {
  @Property({ type: 'string', length: 100 })
  name!: string;

  @Property({ type: 'string', length: 3 })
  currency!: string;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  initialBalance!: string;

  @ManyToOne({ entity: () => Group, ref: true, deleteRule: 'restrict' })
  group!: Ref<Group>;

  /** What a payout from the funded account pays the trader, in percent of the profit paid out. */
  @Property({ type: decimalText(), columnType: 'numeric(5,2)' })
  profitSplitPct!: string;

  @Property({ type: 'json' })
  phases!: PropPhase[];
}
