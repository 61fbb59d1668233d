import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

/**
 * The daily statement mail of a customer and trading date, recorded in the transaction that
 * queues the mail: the key makes it at most one per customer and date, however often the
 * run's last step runs.
 */
@Entity({ tableName: 'daily_statements' })
export class DailyStatement {
  @PrimaryKey({ type: 'uuid' })
  customerId!: string;

  @PrimaryKey({ type: 'date', columnType: 'date' })
  tradingDate!: string;

  @Property({ type: 'uuid' })
  mailId!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  createdAt: Date = new Date();
}
