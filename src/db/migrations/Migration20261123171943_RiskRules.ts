import { Migration } from '@mikro-orm/migrations';

/**
 * Saved risk rules (names unique ignoring case), the per-account record of apply runs,
 * and the flag a rule's `disable_trading` action sets on an account.
 */
export class Migration20261123171943_RiskRules extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "risk_rules" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" varchar(100) not null, "is_active" boolean not null default true, "input" jsonb not null, "created_by" uuid null, constraint "risk_rules_pkey" primary key ("id"));`);
    this.addSql(`create unique index "risk_rules_name_ci" on "risk_rules" (lower("name"));`);

    this.addSql(`create table "risk_run_items" ("run_id" uuid not null, "account_id" uuid not null, "login" bigint not null, "customer_id" uuid not null, "risk_class" text check ("risk_class" in ('toxic', 'watchlist', 'normal', 'unclassified')) not null, "trades" int not null, "moved_to_group_id" uuid null, "notified" boolean not null default false, "trading_disabled" boolean not null default false, constraint "risk_run_items_pkey" primary key ("run_id", "account_id"));`);

    this.addSql(`alter table "accounts" add column "trading_disabled" boolean not null default false;`);

  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "risk_rules" cascade;`);

    this.addSql(`drop table if exists "risk_run_items" cascade;`);

    this.addSql(`alter table "accounts" drop column "trading_disabled";`);

  }

}
