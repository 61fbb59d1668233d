import { Migration } from '@mikro-orm/migrations';

/**
 * Prop payouts (pending, then approved or rejected once); a pending payout's amount is
 * held in the prop account's `reserved`.
 */
export class Migration20261123170334_Payouts extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "payouts" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "account_id" uuid not null, "customer_id" uuid not null, "login" bigint not null, "amount" numeric(38,2) not null, "currency" varchar(3) not null, "status" text check ("status" in ('pending', 'approved', 'rejected')) not null default 'pending', "reason" varchar(500) null, "requested_by" uuid null, "decided_at" timestamptz null, "decided_by" uuid null, "wallet_amount" numeric(38,2) null, "wallet_currency" varchar(3) null, constraint "payouts_pkey" primary key ("id"), constraint payouts_decision check ((status = 'pending') = (decided_at is null) and (status = 'rejected') = (reason is not null)), constraint payouts_amount_positive check (amount > 0));`);
    this.addSql(`create index "payouts_customer_id_created_at_index" on "payouts" ("customer_id", "created_at");`);
    this.addSql(`create index "payouts_login_created_at_index" on "payouts" ("login", "created_at");`);
    this.addSql(`create index "payouts_status_created_at_index" on "payouts" ("status", "created_at");`);

    this.addSql(`alter table "payouts" add constraint "payouts_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "payouts" add constraint "payouts_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade on delete restrict;`);

  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "payouts" cascade;`);

  }

}
