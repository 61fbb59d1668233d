import { Migration } from '@mikro-orm/migrations';

/**
 * Credit, the non-withdrawable bucket: accounts gain `credit` beside `balance`, and ledger
 * rows say which of the two they move. Existing rows all moved the balance, which is the
 * column's default.
 */
export class Migration20261128113000_Credit extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "accounts" add column "credit" numeric(38,2) not null default 0;`);
    this.addSql(`alter table "accounts" add constraint accounts_credit_not_negative check(credit >= 0);`);
    this.addSql(`alter table "ledger_entries" add column "bucket" varchar(16) not null default 'balance';`);
    this.addSql(`alter table "ledger_entries" add constraint ledger_entries_bucket_known check(bucket in ('balance', 'credit'));`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "ledger_entries" drop constraint ledger_entries_bucket_known;`);
    this.addSql(`alter table "ledger_entries" drop column "bucket";`);
    this.addSql(`alter table "accounts" drop constraint accounts_credit_not_negative;`);
    this.addSql(`alter table "accounts" drop column "credit";`);
  }
}
