import { Check, Entity, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { decimalText, MONEY_COLUMN } from './column-types';

/**
 * A promotion campaign: a period and an optional budget, counted in redemptions (`usage`) or
 * in bonus money granted (`spend`). `budget_used` moves in the transaction of each redemption,
 * under the campaign's row lock, so the budget is never overspent.
 */
@Entity({ tableName: 'campaigns' })
@Check({ name: 'campaigns_budget_within_limit', expression: 'budget_limit is null or budget_used <= budget_limit' })
export class Campaign extends BaseEntity<'budgetType' | 'budgetLimit' | 'budgetUsed'> {
  @Property({ type: 'string', length: 200 })
  name!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  startsAt!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  endsAt!: Date;

  @Property({ type: 'string', length: 8, nullable: true })
  budgetType?: 'usage' | 'spend' | null = null;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN, nullable: true })
  budgetLimit?: string | null = null;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN, default: 0 })
  budgetUsed: string = '0';
}
