import { type Ref } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Account } from './account.entity';
import { BaseEntity } from './base.entity';
import { bigintText, decimalText, MONEY_COLUMN } from './column-types';

export type OrderStatus = 'open' | 'closed';

/**
 * A market order (a position): cmd 0 buy, 1 sell. Prices are the quote it traded at
 * (buy at ask, sell at bid); profit is booked in the account currency when it closes.
 */
@Entity({ tableName: 'orders' })
@Index({ properties: ['account', 'status', 'closedAt'] })
// Risk rules aggregate the closed orders of a recent window (src/domain/risk/classify.ts).
@Index({
  name: 'orders_closed_window',
  expression: `create index "orders_closed_window" on "orders" ("closed_at", "account_id") where "status" = 'closed'`,
})
// The trading engine's lookups (src/domain/engine): open orders whose sl, tp or trailing stop a
// tick reaches, each an index range per symbol, and the open orders of a symbol for margin.
@Index({
  name: 'orders_open_sl_index',
  expression: `create index "orders_open_sl_index" on "orders" ("symbol", "cmd", "sl") where status = 'open' and sl is not null`,
})
@Index({
  name: 'orders_open_tp_index',
  expression: `create index "orders_open_tp_index" on "orders" ("symbol", "cmd", "tp") where status = 'open' and tp is not null`,
})
@Index({
  name: 'orders_trail_buy_index',
  expression: `create index "orders_trail_buy_index" on "orders" ("symbol", (coalesce(sl + trailing_stop, 0))) where status = 'open' and cmd = 0 and trailing_stop is not null`,
})
@Index({
  name: 'orders_trail_sell_index',
  expression: `create index "orders_trail_sell_index" on "orders" ("symbol", (coalesce(sl - trailing_stop, 1e20))) where status = 'open' and cmd = 1 and trailing_stop is not null`,
})
@Index({
  name: 'orders_open_symbol_index',
  expression: `create index "orders_open_symbol_index" on "orders" ("symbol", "account_id") where status = 'open'`,
})
export class Order extends BaseEntity<
  | 'ticket'
  | 'status'
  | 'sl'
  | 'tp'
  | 'comment'
  | 'closedAt'
  | 'closePrice'
  | 'profit'
  | 'closeReason'
  | 'bulkCloseRunId'
  | 'trailingStop'
> {
  @Property({ type: bigintText(), columnType: 'bigint', defaultRaw: "nextval('order_ticket_seq')" })
  @Unique()
  ticket!: string;

  @ManyToOne({ entity: () => Account, ref: true, deleteRule: 'restrict' })
  account!: Ref<Account>;

  @Property({ type: bigintText(), columnType: 'bigint' })
  login!: string;

  @Property({ type: 'string', length: 32 })
  symbol!: string;

  @Property({ type: 'smallint' })
  cmd!: 0 | 1;

  @Property({ type: decimalText(), columnType: 'numeric(12,2)' })
  volume!: string;

  @Property({ type: decimalText(), columnType: 'numeric(24,10)' })
  openPrice!: string;

  /** Contract size at opening, so later instrument edits do not change this position's value. */
  @Property({ type: decimalText(), columnType: 'numeric(20,4)' })
  contractSize!: string;

  @Property({ type: decimalText(), columnType: 'numeric(24,10)', nullable: true })
  sl?: string | null = null;

  @Property({ type: decimalText(), columnType: 'numeric(24,10)', nullable: true })
  tp?: string | null = null;

  @Property({ type: 'string', length: 255, nullable: true })
  comment?: string | null = null;

  /** A distance in price: the trading engine moves `sl` behind a favourable price, never back. */
  @Property({ type: decimalText(), columnType: 'numeric(24,10)', nullable: true })
  trailingStop?: string | null = null;

  @Enum({ items: ['open', 'closed'], type: 'string' })
  status: OrderStatus = 'open';

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  closedAt?: Date | null = null;

  @Property({ type: decimalText(), columnType: 'numeric(24,10)', nullable: true })
  closePrice?: string | null = null;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN, nullable: true })
  profit?: string | null = null;

  @Property({ type: 'string', length: 32, nullable: true })
  closeReason?: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  bulkCloseRunId?: string | null = null;
}
