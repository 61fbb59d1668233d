import { Entity, Enum, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

export const EOD_ITEM_STATUSES = ['pending', 'done', 'failed'] as const;
export type EodItemStatus = (typeof EOD_ITEM_STATUSES)[number];

/**
 * One account of an end-of-day run: written for every trading account when the run fans out,
 * and decided by the account's own transaction (done, with what it booked) or by the final
 * failure of its job. A retried job skips the accounts already decided; the run's progress is
 * counted from these rows, so no hot counter row serialises the account jobs.
 */
@Entity({ tableName: 'eod_run_accounts' })
export class EodRunAccount {
  @PrimaryKey({ type: 'uuid' })
  runId!: string;

  @PrimaryKey({ type: 'uuid' })
  accountId!: string;

  @Enum({ items: [...EOD_ITEM_STATUSES], type: 'string' })
  status: EodItemStatus = 'pending';

  @Property({ type: 'integer', default: 0 })
  swapsBooked: number = 0;

  @Property({ type: 'boolean', default: false })
  snapshotWritten: boolean = false;

  @Property({ type: 'string', length: 500, nullable: true })
  error?: string | null = null;
}
