import { Entity, Enum, Index, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { bigintText } from './column-types';

export type BulkCloseStatus = 'running' | 'completed';
export type BulkCloseItemStatus = 'pending' | 'closed' | 'failed';

/** One POST /orders/bulk-close: which tickets it set out to close, and when it finished. */
@Entity({ tableName: 'bulk_close_runs' })
@Index({ properties: ['login', 'createdAt'] })
export class BulkCloseRun extends BaseEntity<'status' | 'completedAt' | 'comment' | 'requestedBy'> {
  @Property({ type: bigintText(), columnType: 'bigint' })
  login!: string;

  @Property({ type: 'string', length: 255, nullable: true })
  comment?: string | null = null;

  @Enum({ items: ['running', 'completed'], type: 'string' })
  status: BulkCloseStatus = 'running';

  @Property({ type: 'uuid', nullable: true })
  requestedBy?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  completedAt?: Date | null = null;
}

/** The outcome of one ticket of a run; the worker that closes the ticket writes it in the same transaction. */
@Entity({ tableName: 'bulk_close_items' })
export class BulkCloseItem {
  @PrimaryKey({ type: 'uuid' })
  runId!: string;

  @PrimaryKey({ type: bigintText(), columnType: 'bigint' })
  ticket!: string;

  @Enum({ items: ['pending', 'closed', 'failed'], type: 'string' })
  status: BulkCloseItemStatus = 'pending';

  @Property({ type: 'text', nullable: true })
  reason?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  finishedAt?: Date | null = null;
}
