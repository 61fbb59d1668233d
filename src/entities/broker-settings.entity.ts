import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

export const DEFAULT_BROKER_NAME = 'Trading Infrastructure';

/** The broker's settings: one row (id 1), created by the migration with the defaults. */
@Entity({ tableName: 'broker_settings' })
export class BrokerSettings {
  @PrimaryKey({ type: 'integer', autoincrement: false })
  id = 1;

  @Property({ type: 'integer' })
  accessTokenTtlSeconds = 900;

  /** The broker's name as its documents show it (report and statement titles). */
  @Property({ type: 'string', length: 200, default: 'Trading Infrastructure' })
  brokerName: string = DEFAULT_BROKER_NAME;

  /** `HH:MM` UTC: when the end of day runs (decisions, section 13). */
  @Property({ type: 'string', length: 5, default: '21:00' })
  rolloverTime: string = '21:00';

  /** The weekday whose rollover books three nights of swap. */
  @Property({ type: 'string', length: 9, default: 'wednesday' })
  tripleSwapDay: string = 'wednesday';

  /**
   * Set by the code that changes the settings, never by an onUpdate hook: the hook would
   * stamp a new time at flush, after the change's audit row had recorded the state "after",
   * so the audit trail would disagree with the row and the answer (PATCH /api/admin/settings).
   */
  @Property({ type: 'datetime', columnType: 'timestamptz' })
  updatedAt: Date = new Date();

  /** How new customers are assigned to a team and a manager (see docs/crm.md). */
  @Property({ type: 'json', columnType: 'jsonb', default: `'{"strategy":"none","country_rules":[]}'` })
  assignment: AssignmentSettings = { strategy: 'none', country_rules: [] };

  /** Where round-robin assignment goes next; advanced under the settings row's lock. */
  @Property({ type: 'integer', default: 0 })
  assignmentCursor: number = 0;
}

export interface AssignmentSettings {
  strategy: 'none' | 'round_robin' | 'least_open_tasks';
  default_manager_id?: string | null | undefined;
  country_rules: Array<{ countries: string[]; team_id: string }>;
}
