import { Entity, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/**
 * A saved risk rule: the preview input with a name and `is_active`.
 * Applying it classifies like the preview and then executes its actions per class. Names
 * are unique ignoring case.
 */
@Entity({ tableName: 'risk_rules' })
@Index({
  name: 'risk_rules_name_ci',
  expression: `create unique index "risk_rules_name_ci" on "risk_rules" (lower("name"))`,
})
export class RiskRule extends BaseEntity<'isActive' | 'createdBy'> {
  @Property({ type: 'string', length: 100 })
  name!: string;

  @Property({ type: 'boolean', default: true })
  isActive: boolean = true;

  /** The rule input as validated (min_trades_to_classify, rolling_window_days, conditions, actions, watchlist, toxic). */
  @Property({ type: 'json' })
  input!: Record<string, unknown>;

  @Property({ type: 'uuid', nullable: true })
  createdBy?: string | null = null;
}
