import { type Ref } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/decorators/legacy';
import { randomUUID } from 'node:crypto';
import { Account } from './account.entity';
import { bigintText, decimalText, MONEY_COLUMN } from './column-types';

/**
 * An account at the end of a trading date, written once by the end-of-day run: balance, equity and margin at the quotes of the rollover, and the sums per
 * ledger kind of the rows booked since the account's previous snapshot (`ledger_seq` is the
 * last row counted, so the next snapshot starts after it). Read by the daily routes and the
 * reports.
 */
@Entity({ tableName: 'account_daily_snapshots' })
@Unique({ properties: ['account', 'tradingDate'] })
// The daily statements read one date's snapshots (src/domain/eod/eod.queries.ts).
@Index({ properties: ['tradingDate'] })
export class AccountDailySnapshot {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @ManyToOne({ entity: () => Account, ref: true, deleteRule: 'cascade' })
  account!: Ref<Account>;

  @Property({ type: bigintText(), columnType: 'bigint' })
  login!: string;

  @Property({ type: 'date', columnType: 'date' })
  tradingDate!: string;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  balance!: string;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  equity!: string;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  margin!: string;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  freeMargin!: string;

  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  floatingProfit!: string;

  /** `{"<ledger kind>": "<sum>"}` over the rows since the previous snapshot. */
  @Property({ type: 'json' })
  movements!: Record<string, string>;

  /** The last ledger seq counted in `movements` (0 when none yet). */
  @Property({ type: bigintText(), columnType: 'bigint' })
  ledgerSeq!: string;

  /** Open orders at the snapshot: with movements, what makes the day worth a statement. */
  @Property({ type: 'integer' })
  openOrders!: number;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  createdAt: Date = new Date();
}
