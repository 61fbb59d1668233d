import { Migration } from '@mikro-orm/migrations';

/**
 * A provider's payment is credited once: at most one `deposit` ledger row per deposit intent,
 * whatever retries or races do. Outside a transaction, so the index on this large table is
 * built CONCURRENTLY (see docs/operations.md); safe to run again.
 */
export class Migration20261128093001_OneDepositPerIntent extends Migration {
  override isTransactional(): boolean {
    return false;
  }

  override async up(): Promise<void> {
    this.addSql(
      `create unique index concurrently if not exists "ledger_entries_one_deposit_per_intent" on "ledger_entries" ("reference_id") where "kind" = 'deposit' and "reference_type" = 'deposit_intent';`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('drop index concurrently if exists "ledger_entries_one_deposit_per_intent";');
  }
}
