import { Migration } from '@mikro-orm/migrations';

export class Migration20261122193005_GroupsAccounts extends Migration {

  override async up(): Promise<void> {
    // Trading logins are plain integers from a sequence; six digits from the start.
    this.addSql(`create sequence if not exists "account_login_seq" start with 100001;`);
    this.addSql(`create table "trading_groups" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "name" varchar(64) not null, "description" text null, "currency" varchar(3) not null, "default_leverage" int not null, "margin_call_level" numeric(10,4) not null, "stopout_level" numeric(10,4) not null, "commission_type" text check ("commission_type" in ('none', 'per_lot', 'per_deal', 'percent')) not null, "commission_value" numeric(12,4) not null, "swap_enabled" boolean not null, "swap_multiplier" numeric(10,4) not null, "swap_free" boolean not null, "swap_free_days" int not null, "is_islamic" boolean not null, "max_exposure" numeric(20,2) null, "net_max_exposure" boolean not null, "max_open_positions" int null, "is_default" boolean not null default false, "is_active" boolean not null default true, constraint "trading_groups_pkey" primary key ("id"));`);
    this.addSql(`create index "trading_groups_is_active_created_at_index" on "trading_groups" ("is_active", "created_at");`);
    this.addSql(`create unique index "trading_groups_name_ci_unique" on "trading_groups" (lower("name"));`);

    this.addSql(`create table "accounts" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "login" bigint not null default nextval('account_login_seq'), "customer_id" uuid not null, "kind" text check ("kind" in ('wallet', 'live', 'demo', 'prop')) not null, "group_id" uuid null, "currency" varchar(3) not null, "leverage" int null, "balance" numeric(20,2) not null default '0', "reserved" numeric(20,2) not null default '0', constraint "accounts_pkey" primary key ("id"));`);
    this.addSql(`alter table "accounts" add constraint "accounts_login_unique" unique ("login");`);
    this.addSql(`create index "accounts_group_id_index" on "accounts" ("group_id");`);
    this.addSql(`create index "accounts_customer_id_kind_index" on "accounts" ("customer_id", "kind");`);
    this.addSql(`create unique index "accounts_one_wallet_per_customer" on "accounts" ("customer_id") where "kind" = 'wallet';`);

    this.addSql(`create table "instruments" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "symbol" varchar(32) not null, "description" text null, "digits" int not null, "contract_size" numeric(20,4) not null, "base_currency" varchar(3) not null, "quote_currency" varchar(3) not null, constraint "instruments_pkey" primary key ("id"));`);
    this.addSql(`alter table "instruments" add constraint "instruments_symbol_unique" unique ("symbol");`);

    this.addSql(`create table "group_instruments" ("group_id" uuid not null, "instrument_id" uuid not null, "enabled" boolean not null, "spread" numeric(12,2) not null, "commission_value" numeric(12,4) null, "swap_long" numeric(12,4) not null, "swap_short" numeric(12,4) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, constraint "group_instruments_pkey" primary key ("group_id", "instrument_id"));`);

    this.addSql(`alter table "accounts" add constraint "accounts_customer_id_foreign" foreign key ("customer_id") references "customers" ("id") on update cascade on delete restrict;`);
    this.addSql(`alter table "accounts" add constraint "accounts_group_id_foreign" foreign key ("group_id") references "trading_groups" ("id") on update cascade on delete restrict;`);

    this.addSql(`alter table "group_instruments" add constraint "group_instruments_group_id_foreign" foreign key ("group_id") references "trading_groups" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "group_instruments" add constraint "group_instruments_instrument_id_foreign" foreign key ("instrument_id") references "instruments" ("id") on update cascade on delete cascade;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "accounts" drop constraint "accounts_group_id_foreign";`);

    this.addSql(`alter table "group_instruments" drop constraint "group_instruments_group_id_foreign";`);

    this.addSql(`alter table "group_instruments" drop constraint "group_instruments_instrument_id_foreign";`);

    this.addSql(`drop table if exists "trading_groups" cascade;`);

    this.addSql(`drop table if exists "accounts" cascade;`);
    this.addSql(`drop sequence if exists "account_login_seq";`);

    this.addSql(`drop table if exists "instruments" cascade;`);

    this.addSql(`drop table if exists "group_instruments" cascade;`);
  }

}
