import { Migration } from '@mikro-orm/migrations';
import { sqlFunction } from '../functions/sql-function';

export class Migration20261122193400_Trading extends Migration {

  override async up(): Promise<void> {
    // Market and pending orders draw tickets from one sequence, so a number names one order.
    this.addSql(`create sequence if not exists "order_ticket_seq" start with 5000001;`);
    this.addSql(`create table "bulk_close_items" ("run_id" uuid not null, "ticket" bigint not null, "status" text check ("status" in ('pending', 'closed', 'failed')) not null default 'pending', "reason" text null, "finished_at" timestamptz null, constraint "bulk_close_items_pkey" primary key ("run_id", "ticket"));`);

    this.addSql(`create table "bulk_close_runs" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "login" bigint not null, "comment" varchar(255) null, "status" text check ("status" in ('running', 'completed')) not null default 'running', "requested_by" uuid null, "completed_at" timestamptz null, constraint "bulk_close_runs_pkey" primary key ("id"));`);
    this.addSql(`create index "bulk_close_runs_login_created_at_index" on "bulk_close_runs" ("login", "created_at");`);

    this.addSql(`create table "domain_events" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "type" varchar(64) not null, "aggregate_type" varchar(32) not null, "aggregate_id" varchar(64) not null, "customer_id" uuid null, "data" jsonb not null, "published_at" timestamptz null, constraint "domain_events_pkey" primary key ("id"));`);
    this.addSql(`create index "domain_events_published_at_created_at_index" on "domain_events" ("published_at", "created_at");`);

    this.addSql(`create table "ledger_entries" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "account_id" uuid not null, "kind" varchar(32) not null, "amount" numeric(20,2) not null, "balance_after" numeric(20,2) not null, "reference_type" varchar(32) null, "reference_id" varchar(64) null, "comment" varchar(500) null, constraint "ledger_entries_pkey" primary key ("id"));`);
    this.addSql(`create index "ledger_entries_reference_type_reference_id_index" on "ledger_entries" ("reference_type", "reference_id");`);
    this.addSql(`create index "ledger_entries_account_id_created_at_index" on "ledger_entries" ("account_id", "created_at");`);
    // The ledger is append-only: a correction is a new row, never an edit.
    this.addSql(sqlFunction('ledger_entries_append_only'));
    this.addSql(`create trigger ledger_entries_no_update before update or delete on "ledger_entries" for each row execute function ledger_entries_append_only();`);

    this.addSql(`create table "orders" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "ticket" bigint not null default nextval('order_ticket_seq'), "account_id" uuid not null, "login" bigint not null, "symbol" varchar(32) not null, "cmd" smallint not null, "volume" numeric(12,2) not null, "open_price" numeric(24,10) not null, "contract_size" numeric(20,4) not null, "sl" numeric(24,10) null, "tp" numeric(24,10) null, "comment" varchar(255) null, "status" text check ("status" in ('open', 'closed')) not null default 'open', "closed_at" timestamptz null, "close_price" numeric(24,10) null, "profit" numeric(20,2) null, "close_reason" varchar(32) null, "bulk_close_run_id" uuid null, constraint "orders_pkey" primary key ("id"));`);
    this.addSql(`alter table "orders" add constraint "orders_ticket_unique" unique ("ticket");`);
    this.addSql(`create index "orders_account_id_status_index" on "orders" ("account_id", "status");`);

    this.addSql(`create table "pending_orders" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "ticket" bigint not null default nextval('order_ticket_seq'), "request_id" uuid not null, "account_id" uuid not null, "login" bigint not null, "symbol" varchar(32) not null, "cmd" smallint not null, "volume" numeric(12,2) not null, "trigger_price" numeric(24,10) not null, "limit_price" numeric(24,10) null, "sl" numeric(24,10) null, "tp" numeric(24,10) null, "trailing_stop" numeric(24,10) null, "expiry_at" timestamptz null, "comment" varchar(255) null, "status" text check ("status" in ('pending', 'triggered', 'filled', 'cancelled', 'expired')) not null default 'pending', "triggered_at" timestamptz null, "filled_order" bigint null, constraint "pending_orders_pkey" primary key ("id"));`);
    this.addSql(`alter table "pending_orders" add constraint "pending_orders_ticket_unique" unique ("ticket");`);
    this.addSql(`create index "pending_orders_account_id_status_index" on "pending_orders" ("account_id", "status");`);

    this.addSql(`alter table "ledger_entries" add constraint "ledger_entries_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete restrict;`);

    this.addSql(`alter table "orders" add constraint "orders_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete restrict;`);

    this.addSql(`alter table "pending_orders" add constraint "pending_orders_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete restrict;`);

  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "bulk_close_items" cascade;`);

    this.addSql(`drop table if exists "bulk_close_runs" cascade;`);

    this.addSql(`drop table if exists "domain_events" cascade;`);

    this.addSql(`drop table if exists "ledger_entries" cascade;`);
    this.addSql(`drop function if exists ledger_entries_append_only();`);

    this.addSql(`drop table if exists "orders" cascade;`);

    this.addSql(`drop table if exists "pending_orders" cascade;`);
    this.addSql(`drop sequence if exists "order_ticket_seq";`);

  }

}
