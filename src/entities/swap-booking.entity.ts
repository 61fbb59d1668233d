import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { bigintText, decimalText, MONEY_COLUMN } from './column-types';

/**
 * The guard that books an order's swap at most once per trading date: the key (ticket,
 * trading date) is inserted in the transaction that books the ledger row, so a retried job,
 * a worker killed mid-run or a second run of the date finds it taken and books nothing.
 */
@Entity({ tableName: 'swap_bookings' })
export class SwapBooking {
  @PrimaryKey({ type: bigintText(), columnType: 'bigint' })
  ticket!: string;

  @PrimaryKey({ type: 'date', columnType: 'date' })
  tradingDate!: string;

  @Property({ type: 'uuid' })
  accountId!: string;

  /** Signed as it hit the balance; 0 when the order was due nothing (swap-free, weekend). */
  @Property({ type: decimalText(), columnType: MONEY_COLUMN })
  amount!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  createdAt: Date = new Date();
}
