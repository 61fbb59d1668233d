import { Migration } from '@mikro-orm/migrations';

/** Bonus programmes, the bonuses granted under them, and the closed orders each one counted. */
export class Migration20261128113100_Bonuses extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "bonus_programs" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" varchar(200) not null, "currency" varchar(3) not null, "kind" varchar(16) not null, "amount" numeric(38,2) null, "percent" numeric(9,4) null, "max_amount" numeric(38,2) null, "min_deposit" numeric(38,2) null, "group_ids" jsonb not null, "trigger" varchar(16) not null, "first_deposit_only" boolean not null, "release_mode" varchar(16) not null, "lots_per_unit" numeric(20,6) not null, "lifetime_days" int null, "on_transfer_out" varchar(16) not null, "min_hold_seconds" int not null, "starts_at" timestamptz null, "ends_at" timestamptz null, "enabled" boolean not null, constraint "bonus_programs_pkey" primary key ("id"));`);
    this.addSql(`create table "bonuses" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "program_id" uuid not null, "customer_id" uuid not null, "account_id" uuid not null, "login" bigint not null, "amount" numeric(38,2) not null, "released" numeric(38,2) not null default 0, "lots_required" numeric(20,2) not null, "lots_done" numeric(20,2) not null default 0, "status" varchar(16) not null, "expires_at" timestamptz null, "source_type" varchar(16) not null, "source_id" varchar(64) null, "end_reason" varchar(500) null, constraint "bonuses_pkey" primary key ("id"));`);
    this.addSql(`create index "bonuses_customer_id_index" on "bonuses" ("customer_id");`);
    this.addSql(`create index "bonuses_account_id_status_index" on "bonuses" ("account_id", "status");`);
    this.addSql(`create table "bonus_turnover" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "bonus_id" uuid not null, "ticket" bigint not null, "lots" numeric(20,2) not null, constraint "bonus_turnover_pkey" primary key ("id"));`);
    this.addSql(`alter table "bonus_turnover" add constraint "bonus_turnover_bonus_id_ticket_unique" unique ("bonus_id", "ticket");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "bonus_turnover";`);
    this.addSql(`drop table if exists "bonuses";`);
    this.addSql(`drop table if exists "bonus_programs";`);
  }
}
