import { Entity, Enum, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

export const EOD_RUN_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type EodRunStatus = (typeof EOD_RUN_STATUSES)[number];

/**
 * One end-of-day run of a trading date: the rollover's swaps and the daily snapshots. At most
 * one run of a date is queued or running at a time (a partial unique index): a second request
 * for the date meanwhile answers the run in progress. A finished date may run again, and
 * books nothing twice (swap_bookings and account_daily_snapshots are unique per date).
 * The counters are frozen here when the run finishes; while it runs they are read from its
 * items (eod_run_accounts).
 */
@Entity({ tableName: 'eod_runs' })
@Index({
  name: 'eod_runs_one_active_per_date',
  expression: `create unique index "eod_runs_one_active_per_date" on "eod_runs" ("trading_date") where "status" in ('queued', 'running')`,
})
@Index({ properties: ['tradingDate', 'createdAt'] })
export class EodRun extends BaseEntity<
  | 'status'
  | 'accountsTotal'
  | 'accountsDone'
  | 'accountsFailed'
  | 'swapsBooked'
  | 'snapshotsWritten'
  | 'startedAt'
  | 'finishedAt'
  | 'requestedBy'
  | 'error'
> {
  @Property({ type: 'date', columnType: 'date' })
  tradingDate!: string;

  @Enum({ items: [...EOD_RUN_STATUSES], type: 'string' })
  status: EodRunStatus = 'queued';

  /** Orders opened at or after this instant are not in this rollover. */
  @Property({ type: 'datetime', columnType: 'timestamptz' })
  cutoffAt!: Date;

  @Property({ type: 'integer' })
  accountsTotal: number = 0;

  @Property({ type: 'integer' })
  accountsDone: number = 0;

  @Property({ type: 'integer' })
  accountsFailed: number = 0;

  @Property({ type: 'integer' })
  swapsBooked: number = 0;

  @Property({ type: 'integer' })
  snapshotsWritten: number = 0;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  startedAt?: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  finishedAt?: Date | null = null;

  /** The staff user who asked for it; null for the scheduled rollover. */
  @Property({ type: 'uuid', nullable: true })
  requestedBy?: string | null = null;

  @Property({ type: 'string', length: 500, nullable: true })
  error?: string | null = null;
}
