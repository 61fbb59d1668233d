import { Migration } from '@mikro-orm/migrations';

/** Introducing brokers: plans, the partner tree, accruals per order and level, daily payments; customers' attribution. */
export class Migration20261128133000_Partners extends Migration {

  override name = 'Migration20261128133000_Partners';

  override up(): void | Promise<void> {
    this.addSql(`create table "ib_accruals" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "ticket" bigint not null, "partner_id" uuid not null, "level" smallint not null, "plan_id" uuid not null, "client_customer_id" uuid not null, "login" bigint not null, "symbol" varchar(32) not null, "lots" numeric(20,2) not null, "amount" numeric(38,2) not null, "currency" varchar(3) not null, "status" varchar(16) not null, "reason" varchar(32) null, "charge" varchar(8) not null, "closed_at" timestamptz not null, "payment_id" uuid null, "paid_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "ib_accruals_client_customer_id_closed_at_index" on "ib_accruals" ("client_customer_id", "closed_at");`);
    this.addSql(`create index "ib_accruals_partner_id_status_index" on "ib_accruals" ("partner_id", "status");`);
    this.addSql(`alter table "ib_accruals" add constraint "ib_accruals_ticket_partner_id_level_unique" unique ("ticket", "partner_id", "level");`);

    this.addSql(`create table "ib_payments" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "partner_id" uuid not null, "trading_date" date not null, "amount" numeric(38,2) not null, "accruals" int not null, primary key ("id"));`);
    this.addSql(`alter table "ib_payments" add constraint "ib_payments_partner_id_trading_date_unique" unique ("partner_id", "trading_date");`);

    this.addSql(`create table "ib_plans" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" varchar(200) not null, "currency" varchar(3) not null, "basis" varchar(16) not null, "levels" jsonb not null, "max_per_lot" numeric(38,2) null, "group_ids" jsonb null, "symbol_overrides" jsonb null, "charge" varchar(8) not null, "min_hold_seconds" int not null default 60, primary key ("id"));`);

    this.addSql(`create table "partners" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "customer_id" uuid not null, "parent_partner_id" uuid null, "plan_id" uuid not null, "code" varchar(32) not null, primary key ("id"));`);
    this.addSql(`alter table "partners" add constraint "partners_customer_id_unique" unique ("customer_id");`);
    this.addSql(`create index "partners_parent_partner_id_index" on "partners" ("parent_partner_id");`);
    this.addSql(`alter table "partners" add constraint "partners_code_unique" unique ("code");`);

    this.addSql(`alter table "customers" add "partner_id" uuid null;`);
    this.addSql(`create index "customers_partner_id_index" on "customers" ("partner_id");`);

  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "ib_accruals" cascade;`);
    this.addSql(`drop table if exists "ib_payments" cascade;`);
    this.addSql(`drop table if exists "ib_plans" cascade;`);
    this.addSql(`drop table if exists "partners" cascade;`);

    this.addSql(`drop index "customers_partner_id_index";`);
    this.addSql(`alter table "customers" drop column "partner_id";`);

  }

}
