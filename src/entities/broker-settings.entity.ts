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

  /** `HH:MM` UTC: when the end of day runs. */
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

  /** Who may sign up or be entered as a lead, by country, and how often one address may try. */
  @Property({ type: 'json', columnType: 'jsonb', default: `'{"blocked_countries":[],"max_per_ip_per_hour":5}'` })
  registration: RegistrationSettings = { blocked_countries: [], max_per_ip_per_hour: 5 };

  /** While enabled, customers may read their data and log in, and nothing else. */
  @Property({ type: 'json', columnType: 'jsonb', default: `'{"enabled":false,"message":""}'` })
  maintenance: MaintenanceSettings = { enabled: false, message: '' };

  /** Days without a closed trade after which the end of day makes an active customer dormant. */
  @Property({ type: 'integer', default: 90 })
  dormantAfterDays: number = 90;

  /** How soon a support conversation is due its first staff answer. */
  @Property({ type: 'integer', default: 240 })
  supportFirstResponseMinutes: number = 240;

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

export interface RegistrationSettings {
  blocked_countries: string[];
  /** When set, only these countries may sign up (blocked ones still may not). */
  allowed_countries?: string[] | null | undefined;
  max_per_ip_per_hour: number;
}

export interface MaintenanceSettings {
  enabled: boolean;
  message: string;
  until?: string | null | undefined;
}
