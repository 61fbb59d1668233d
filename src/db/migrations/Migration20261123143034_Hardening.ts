import { Migration } from '@mikro-orm/migrations';

/**
 * Money columns widened to numeric(38,2) (domain/money/bounds.ts shows why nothing
 * allowed overflows them), the ledger's booking sequence, role names unique ignoring case.
 */
export class Migration20261123143034_Hardening extends Migration {

  override async up(): Promise<void> {
    this.addSql(`alter table "accounts" alter column "balance" type numeric(38,2) using ("balance"::numeric(38,2));`);
    this.addSql(`alter table "accounts" alter column "reserved" type numeric(38,2) using ("reserved"::numeric(38,2));`);

    this.addSql(`drop index "ledger_entries_account_id_created_at_index";`);

    // Rows booked before the sequence existed are numbered in creation order; the append-only
    // trigger is lifted for that one numbering and put back in the same transaction.
    this.addSql(`create sequence if not exists "ledger_booking_seq";`);
    this.addSql(`alter table "ledger_entries" add column "seq" bigint null;`);
    this.addSql(`alter table "ledger_entries" disable trigger "ledger_entries_no_update";`);
    this.addSql(
      `update "ledger_entries" l set "seq" = o.n from (select "id", row_number() over (order by "created_at", "id") as n from "ledger_entries") o where l."id" = o."id";`,
    );
    this.addSql(`alter table "ledger_entries" enable trigger "ledger_entries_no_update";`);
    this.addSql(`select setval('ledger_booking_seq', coalesce((select max("seq") from "ledger_entries"), 0) + 1, false);`);
    this.addSql(`alter table "ledger_entries" alter column "seq" set default nextval('ledger_booking_seq'), alter column "seq" set not null;`);
    this.addSql(`alter table "ledger_entries" alter column "amount" type numeric(38,2) using ("amount"::numeric(38,2));`);
    this.addSql(`alter table "ledger_entries" alter column "balance_after" type numeric(38,2) using ("balance_after"::numeric(38,2));`);
    this.addSql(`alter table "ledger_entries" add constraint "ledger_entries_seq_unique" unique ("seq");`);
    this.addSql(`create index "ledger_entries_account_id_seq_index" on "ledger_entries" ("account_id", "seq");`);

    this.addSql(`alter table "orders" alter column "profit" type numeric(38,2) using ("profit"::numeric(38,2));`);

    this.addSql(`alter table "roles" drop constraint "roles_name_unique";`);

    this.addSql(`create unique index "roles_name_ci_unique" on "roles" (lower("name"));`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "accounts" alter column "balance" type numeric(20,2) using ("balance"::numeric(20,2));`);
    this.addSql(`alter table "accounts" alter column "reserved" type numeric(20,2) using ("reserved"::numeric(20,2));`);

    this.addSql(`alter table "ledger_entries" drop constraint "ledger_entries_seq_unique";`);
    this.addSql(`drop index "ledger_entries_account_id_seq_index";`);
    this.addSql(`alter table "ledger_entries" drop column "seq";`);
    this.addSql(`drop sequence if exists "ledger_booking_seq";`);

    this.addSql(`alter table "ledger_entries" alter column "amount" type numeric(20,2) using ("amount"::numeric(20,2));`);
    this.addSql(`alter table "ledger_entries" alter column "balance_after" type numeric(20,2) using ("balance_after"::numeric(20,2));`);
    this.addSql(`create index "ledger_entries_account_id_created_at_index" on "ledger_entries" ("account_id", "created_at");`);

    this.addSql(`alter table "orders" alter column "profit" type numeric(20,2) using ("profit"::numeric(20,2));`);

    this.addSql(`drop index "roles_name_ci_unique";`);

    this.addSql(`alter table "roles" add constraint "roles_name_unique" unique ("name");`);
  }

}
