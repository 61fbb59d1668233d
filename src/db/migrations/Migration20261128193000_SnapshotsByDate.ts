import { Migration } from '@mikro-orm/migrations';

/**
 * The snapshots of one trading date, read from an index: the daily statements page through a
 * date's snapshots by customer after every run, and without it each page read every snapshot
 * ever written (a row per account and date, so the table grows by the number of accounts
 * every day). Outside a transaction, so the index on this large table is built CONCURRENTLY
 * (see docs/operations.md); safe to run again.
 */
export class Migration20261128193000_SnapshotsByDate extends Migration {
  override isTransactional(): boolean {
    return false;
  }

  override async up(): Promise<void> {
    this.addSql(
      'create index concurrently if not exists "account_daily_snapshots_trading_date_index" on "account_daily_snapshots" ("trading_date");',
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop index concurrently if exists "account_daily_snapshots_trading_date_index";');
  }
}
