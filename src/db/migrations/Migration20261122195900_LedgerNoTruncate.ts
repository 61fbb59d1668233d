import { Migration } from '@mikro-orm/migrations';

/** The append-only ledger refused UPDATE and DELETE; TRUNCATE is refused too. */
export class Migration20261122195900_LedgerNoTruncate extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create trigger ledger_entries_no_truncate before truncate on "ledger_entries" for each statement execute function ledger_entries_append_only();`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists ledger_entries_no_truncate on "ledger_entries";`);
  }
}
