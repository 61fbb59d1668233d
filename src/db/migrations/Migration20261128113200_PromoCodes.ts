import { Migration } from '@mikro-orm/migrations';

/** Campaigns with budgets, promo codes and their redemptions. */
export class Migration20261128113200_PromoCodes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "campaigns" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" varchar(200) not null, "starts_at" timestamptz not null, "ends_at" timestamptz not null, "budget_type" varchar(8) null, "budget_limit" numeric(38,2) null, "budget_used" numeric(38,2) not null default 0, constraint "campaigns_pkey" primary key ("id"));`);
    this.addSql(`alter table "campaigns" add constraint "campaigns_budget_within_limit" check (budget_limit is null or budget_used <= budget_limit);`);
    this.addSql(`create table "promo_codes" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "code" varchar(32) not null, "campaign_id" uuid null, "bonus_program_id" uuid not null, "max_redemptions" int null, "redemptions" int not null default 0, "max_per_customer" int not null, "expires_at" timestamptz null, "first_deposit_only" boolean not null, "min_deposit" numeric(38,2) null, "countries" jsonb null, "partner_id" varchar(64) null, "active" boolean not null default true, constraint "promo_codes_pkey" primary key ("id"));`);
    this.addSql(`create unique index "promo_codes_active_code" on "promo_codes" ("code") where "active";`);
    this.addSql(`create table "promo_redemptions" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "promo_code_id" uuid not null, "code" varchar(32) not null, "customer_id" uuid not null, "login" bigint null, "status" varchar(16) not null, "bonus_id" uuid null, "cost" numeric(38,2) not null default 0, constraint "promo_redemptions_pkey" primary key ("id"));`);
    this.addSql(`create index "promo_redemptions_customer_id_status_index" on "promo_redemptions" ("customer_id", "status");`);
    this.addSql(`create index "promo_redemptions_promo_code_id_customer_id_index" on "promo_redemptions" ("promo_code_id", "customer_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "promo_redemptions";`);
    this.addSql(`drop table if exists "promo_codes";`);
    this.addSql(`drop table if exists "campaigns";`);
  }
}
