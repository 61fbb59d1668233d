import { Entity, Enum, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { bigintText } from './column-types';

export const REPORT_TYPES = [
  'account_statement',
  'trades',
  'exposure',
  'deposits_withdrawals',
  'daily',
  'promotions',
  'ib_rewards',
  'ib_acquisition',
] as const;
export type ReportType = (typeof REPORT_TYPES)[number];

export const REPORT_FORMATS = ['csv', 'pdf', 'json'] as const;
export type ReportFormat = (typeof REPORT_FORMATS)[number];

export const REPORT_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type ReportStatus = (typeof REPORT_STATUSES)[number];

/**
 * A report asked for by staff (`requestedBy`) or a customer (`customerId`, statements of its
 * own accounts only), built by the reports worker. Its file is the report's rows in
 * report_chunks; `status` becomes `completed` only in the statement that records the file's
 * size, after its last chunk is stored, so a half-written file is never downloadable.
 */
@Entity({ tableName: 'reports' })
@Index({ properties: ['customerId', 'createdAt'] })
// The retention job deletes finished reports (their files by cascade) REPORT_RETENTION_DAYS after they finished.
@Index({ properties: ['finishedAt'] })
// The stuck-report sweep reads the unfinished reports by age.
@Index({
  name: 'reports_unfinished_index',
  expression: `create index "reports_unfinished_index" on "reports" ("updated_at") where "status" in ('queued', 'running')`,
})
export class Report extends BaseEntity<
  'status' | 'rows' | 'bytes' | 'error' | 'startedAt' | 'finishedAt' | 'requestedBy' | 'customerId' | 'requeuedAt' | 'scope'
> {
  @Enum({ items: [...REPORT_TYPES], type: 'string' })
  type!: ReportType;

  @Enum({ items: [...REPORT_FORMATS], type: 'string' })
  format!: ReportFormat;

  /** The validated params of the type (dates as `YYYY-MM-DD`). */
  @Property({ type: 'json' })
  params!: Record<string, unknown>;

  @Enum({ items: [...REPORT_STATUSES], type: 'string' })
  status: ReportStatus = 'queued';

  /** Data rows written (every section's), set when the file is complete. */
  @Property({ type: bigintText(), columnType: 'bigint', nullable: true })
  rows?: string | null = null;

  @Property({ type: bigintText(), columnType: 'bigint', nullable: true })
  bytes?: string | null = null;

  /** Why the build failed; null otherwise. */
  @Property({ type: 'text', nullable: true })
  error?: string | null = null;

  /** The staff user who asked (for an API token, the user who issued it). */
  @Property({ type: 'uuid', nullable: true })
  requestedBy?: string | null = null;

  /** The customer who asked for its own statement. */
  @Property({ type: 'uuid', nullable: true })
  customerId?: string | null = null;

  /**
   * The data scope of the staff user who asked, as it was then: the build reads only the rows
   * of customers in it. Null for a customer's own statement.
   */
  @Property({ type: 'json', nullable: true })
  scope?: ReportScope | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  startedAt?: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  finishedAt?: Date | null = null;

  /** When the sweep queued the build again after its job was lost (once at most). */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  requeuedAt?: Date | null = null;
}

export interface ReportScope {
  data_scope: 'own' | 'team' | 'all';
  user_id: string | null;
  team_ids: string[];
}
