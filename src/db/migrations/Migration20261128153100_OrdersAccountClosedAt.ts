import { Migration } from '@mikro-orm/migrations';

/**
 * An account's closed orders by close time, read from the index: the hedged volume of a bonus
 * close reads the account's closes since its order opened as a range, not every order the
 * account ever closed. The close already rewrites this index's entry (its status changes), so
 * the wider key adds no index write to a close. Outside a transaction, so the index on this
 * large table is built CONCURRENTLY (see docs/operations.md) before the narrower one goes; safe
 * to run again.
 */
export class Migration20261128153100_OrdersAccountClosedAt extends Migration {
  override isTransactional(): boolean {
    return false;
  }

  override async up(): Promise<void> {
    this.addSql(
      'create index concurrently if not exists "orders_account_id_status_closed_at_index" on "orders" ("account_id", "status", "closed_at");',
    );
    this.addSql('drop index concurrently if exists "orders_account_id_status_index";');
  }

  override async down(): Promise<void> {
    this.addSql('create index concurrently if not exists "orders_account_id_status_index" on "orders" ("account_id", "status");');
    this.addSql('drop index concurrently if exists "orders_account_id_status_closed_at_index";');
  }
}
