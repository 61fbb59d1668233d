import { Entity, Enum, Index, ManyToOne, Property, Unique, type Ref } from '@mikro-orm/core';
import { Account } from './account.entity';
import { BaseEntity } from './base.entity';
import { bigintText, decimalText } from './column-types';

export const PENDING_STATUSES = ['pending', 'triggered', 'filled', 'cancelled', 'expired'] as const;
export type PendingStatus = (typeof PENDING_STATUSES)[number];

/** cmd 2 buy limit, 3 sell limit, 4 buy stop, 5 sell stop, 6 buy stop limit, 7 sell stop limit. */
@Entity({ tableName: 'pending_orders' })
@Index({ properties: ['account', 'status'] })
export class PendingOrder extends BaseEntity<
  | 'ticket'
  | 'status'
  | 'sl'
  | 'tp'
  | 'comment'
  | 'limitPrice'
  | 'trailingStop'
  | 'expiryAt'
  | 'triggeredAt'
  | 'filledOrder'
  | 'cancelReason'
> {
  /** Tickets of market and pending orders come from one sequence, so a number names one order. */
  @Property({ type: bigintText(), columnType: 'bigint', defaultRaw: "nextval('order_ticket_seq')" })
  @Unique()
  ticket!: string;

  @Property({ type: 'uuid' })
  requestId!: string;

  @ManyToOne({ entity: () => Account, ref: true, deleteRule: 'restrict' })
  account!: Ref<Account>;

  @Property({ type: bigintText(), columnType: 'bigint' })
  login!: string;

  @Property({ type: 'string', length: 32 })
  symbol!: string;

  @Property({ type: 'smallint' })
  cmd!: number;

  @Property({ type: decimalText(), columnType: 'numeric(12,2)' })
  volume!: string;

  @Property({ type: decimalText(), columnType: 'numeric(24,10)' })
  triggerPrice!: string;

  @Property({ type: decimalText(), columnType: 'numeric(24,10)', nullable: true })
  limitPrice?: string | null = null;

  @Property({ type: decimalText(), columnType: 'numeric(24,10)', nullable: true })
  sl?: string | null = null;

  @Property({ type: decimalText(), columnType: 'numeric(24,10)', nullable: true })
  tp?: string | null = null;

  @Property({ type: decimalText(), columnType: 'numeric(24,10)', nullable: true })
  trailingStop?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  expiryAt?: Date | null = null;

  @Property({ type: 'string', length: 255, nullable: true })
  comment?: string | null = null;

  @Enum({ items: [...PENDING_STATUSES], type: 'string' })
  status: PendingStatus = 'pending';

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  triggeredAt?: Date | null = null;

  @Property({ type: bigintText(), columnType: 'bigint', nullable: true })
  filledOrder?: string | null = null;

  /** Why the trading engine cancelled it (a fill that failed the margin check). */
  @Property({ type: 'string', length: 255, nullable: true })
  cancelReason?: string | null = null;
}
