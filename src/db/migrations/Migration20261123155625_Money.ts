import { Migration } from '@mikro-orm/migrations';

/**
 * Transfers (the two ledger legs' record, with the exact dealer rate as the products
 * of the bids and asks used) and withdrawals (pending, then completed or rejected once); the
 * database refuses a wallet whose reserve exceeds its balance.
 */
export class Migration20261123155625_Money extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "transfers" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "transfer_in_id" uuid not null, "customer_id" uuid not null, "from_account_id" uuid not null, "to_account_id" uuid not null, "from_login" bigint not null, "to_login" bigint not null, "amount" numeric(38,2) not null, "from_currency" varchar(3) not null, "converted_amount" numeric(38,2) not null, "to_currency" varchar(3) not null, "source" varchar(80) not null, "rate_multiplier" numeric not null, "rate_divisor" numeric not null, constraint "transfers_pkey" primary key ("id"), constraint transfers_two_accounts check (from_account_id <> to_account_id), constraint transfers_positive check (amount > 0 and converted_amount > 0 and rate_multiplier > 0 and rate_divisor > 0));`);
    this.addSql(`alter table "transfers" add constraint "transfers_transfer_in_id_unique" unique ("transfer_in_id");`);
    this.addSql(`create index "transfers_customer_id_created_at_index" on "transfers" ("customer_id", "created_at");`);

    this.addSql(`create table "withdrawals" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "account_id" uuid not null, "customer_id" uuid not null, "login" bigint not null, "amount" numeric(38,2) not null, "currency" varchar(3) not null, "status" text check ("status" in ('pending', 'completed', 'rejected')) not null default 'pending', "payment_data" jsonb not null, "comment" varchar(500) null, "reason" varchar(500) null, "decided_at" timestamptz null, "decided_by" uuid null, constraint "withdrawals_pkey" primary key ("id"), constraint withdrawals_decision check ((status = 'pending') = (decided_at is null) and (status = 'rejected') = (reason is not null)), constraint withdrawals_amount_positive check (amount > 0));`);
    this.addSql(`create index "withdrawals_login_created_at_index" on "withdrawals" ("login", "created_at");`);
    this.addSql(`create index "withdrawals_customer_id_created_at_index" on "withdrawals" ("customer_id", "created_at");`);
    this.addSql(`create index "withdrawals_status_created_at_index" on "withdrawals" ("status", "created_at");`);

    this.addSql(`alter table "transfers" add constraint "transfers_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "transfers" add constraint "transfers_from_account_id_foreign" foreign key ("from_account_id") references "accounts" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "transfers" add constraint "transfers_to_account_id_foreign" foreign key ("to_account_id") references "accounts" ("id") on update cascade on delete restrict;`);

    this.addSql(`alter table "withdrawals" add constraint "withdrawals_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "withdrawals" add constraint "withdrawals_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade on delete restrict;`);

    this.addSql(`alter table "accounts" add constraint accounts_reserved_within_balance check(reserved >= 0 and (kind <> 'wallet' or reserved <= balance));`);

  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "transfers" cascade;`);

    this.addSql(`drop table if exists "withdrawals" cascade;`);

    this.addSql(`alter table "accounts" drop constraint accounts_reserved_within_balance;`);

  }

}
