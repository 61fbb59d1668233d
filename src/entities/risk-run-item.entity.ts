import { Entity, Enum, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { bigintText } from './column-types';

/**
 * One account of an apply run: its class, and each action executed on it. Written by the
 * worker with INSERT ... SELECT from the classification, and each action marks its column in
 * the statement that performs it, so a retried job skips what is done (every action is
 * idempotent, and the row says which ran).
 */
@Entity({ tableName: 'risk_run_items' })
export class RiskRunItem {
  @PrimaryKey({ type: 'uuid' })
  runId!: string;

  @PrimaryKey({ type: 'uuid' })
  accountId!: string;

  @Property({ type: bigintText(), columnType: 'bigint' })
  login!: string;

  @Property({ type: 'uuid' })
  customerId!: string;

  @Enum({ items: ['toxic', 'watchlist', 'normal', 'unclassified'], type: 'string' })
  riskClass!: 'toxic' | 'watchlist' | 'normal' | 'unclassified';

  /** Closed orders of the window that counted. */
  @Property({ type: 'integer' })
  trades!: number;

  /** The group the account was moved to; null when the class has no move or it has not run yet. */
  @Property({ type: 'uuid', nullable: true })
  movedToGroupId?: string | null = null;

  @Property({ type: 'boolean', default: false })
  notified: boolean = false;

  @Property({ type: 'boolean', default: false })
  tradingDisabled: boolean = false;

  /** The account's group when the run classified it (null on runs recorded before this was kept). */
  @Property({ type: 'uuid', nullable: true })
  beforeGroupId?: string | null = null;

  /** Whether trading was already disabled when the run classified the account (null: not recorded). */
  @Property({ type: 'boolean', nullable: true })
  beforeTradingDisabled?: boolean | null = null;
}
