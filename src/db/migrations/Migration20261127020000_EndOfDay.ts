import { Migration } from '@mikro-orm/migrations';

/**
 * The end of day (decisions, section 13): the broker's rollover time and triple-swap day, the
 * runs and their accounts, the swap guard (one booking per order and trading date), the daily
 * snapshots, the daily statements (one per customer and date), and the `daily_statement`
 * template as a built-in (src/domain/mail/templates.ts as of this migration).
 */
export class Migration20261127020000_EndOfDay extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "daily_statements" ("customer_id" uuid not null, "trading_date" date not null, "mail_id" uuid not null, "created_at" timestamptz not null, constraint "daily_statements_pkey" primary key ("customer_id", "trading_date"));`);

    this.addSql(`create table "eod_runs" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "trading_date" date not null, "status" text check ("status" in ('queued', 'running', 'completed', 'failed')) not null default 'queued', "cutoff_at" timestamptz not null, "accounts_total" int not null default 0, "accounts_done" int not null default 0, "accounts_failed" int not null default 0, "swaps_booked" int not null default 0, "snapshots_written" int not null default 0, "started_at" timestamptz null, "finished_at" timestamptz null, "requested_by" uuid null, "error" varchar(500) null, constraint "eod_runs_pkey" primary key ("id"));`);
    this.addSql(`create index "eod_runs_trading_date_created_at_index" on "eod_runs" ("trading_date", "created_at");`);
    this.addSql(`create unique index "eod_runs_one_active_per_date" on "eod_runs" ("trading_date") where "status" in ('queued', 'running');`);

    this.addSql(`create table "eod_run_accounts" ("run_id" uuid not null, "account_id" uuid not null, "status" text check ("status" in ('pending', 'done', 'failed')) not null default 'pending', "swaps_booked" int not null default 0, "snapshot_written" boolean not null default false, "error" varchar(500) null, constraint "eod_run_accounts_pkey" primary key ("run_id", "account_id"));`);

    this.addSql(`create table "account_daily_snapshots" ("id" uuid not null, "account_id" uuid not null, "login" bigint not null, "trading_date" date not null, "balance" numeric(38,2) not null, "equity" numeric(38,2) not null, "margin" numeric(38,2) not null, "free_margin" numeric(38,2) not null, "floating_profit" numeric(38,2) not null, "movements" jsonb not null, "ledger_seq" bigint not null, "open_orders" int not null, "created_at" timestamptz not null, constraint "account_daily_snapshots_pkey" primary key ("id"));`);
    this.addSql(`alter table "account_daily_snapshots" add constraint "account_daily_snapshots_account_id_trading_date_unique" unique ("account_id", "trading_date");`);

    this.addSql(`create table "swap_bookings" ("ticket" bigint not null, "trading_date" date not null, "account_id" uuid not null, "amount" numeric(38,2) not null, "created_at" timestamptz not null, constraint "swap_bookings_pkey" primary key ("ticket", "trading_date"));`);

    this.addSql(`alter table "account_daily_snapshots" add constraint "account_daily_snapshots_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on update cascade on delete cascade;`);

    this.addSql(`alter table "broker_settings" add column "rollover_time" varchar(5) not null default '21:00', add column "triple_swap_day" varchar(9) not null default 'wednesday';`);
    this.addSql("insert into \"email_templates\" (\"id\", \"created_at\", \"updated_at\", \"key\", \"name\", \"default_locale\", \"translations\", \"built_in\") values (gen_random_uuid(), now(), now(), 'daily_statement', 'Daily statement', 'en', '{\"en\":{\"subject\":\"Your daily statement for {{trading_date}}\",\"text\":\"Hello {{first_name}},\\n\\nyour accounts at the end of {{trading_date}}: {{accounts}}\\n\\nThe full statement of each account is in your client area.\\n\",\"html\":\"<p>Hello {{first_name}},</p><p>your accounts at the end of <strong>{{trading_date}}</strong>: {{accounts}}</p><p>The full statement of each account is in your client area.</p>\"},\"de\":{\"subject\":\"Ihr Tagesauszug für den {{trading_date}}\",\"text\":\"Hallo {{first_name}},\\n\\nIhre Konten zum Ende des {{trading_date}}: {{accounts}}\\n\\nDen vollständigen Auszug jedes Kontos finden Sie in Ihrem Kundenbereich.\\n\",\"html\":\"<p>Hallo {{first_name}},</p><p>Ihre Konten zum Ende des <strong>{{trading_date}}</strong>: {{accounts}}</p><p>Den vollständigen Auszug jedes Kontos finden Sie in Ihrem Kundenbereich.</p>\"}}'::jsonb, true) on conflict (\"key\") do nothing;");

  }

  override async down(): Promise<void> {
    this.addSql(`delete from "email_templates" where "key" = 'daily_statement' and "built_in";`);
    this.addSql(`drop table if exists "daily_statements" cascade;`);

    this.addSql(`drop table if exists "eod_runs" cascade;`);

    this.addSql(`drop table if exists "eod_run_accounts" cascade;`);

    this.addSql(`drop table if exists "account_daily_snapshots" cascade;`);

    this.addSql(`drop table if exists "swap_bookings" cascade;`);

    this.addSql(`alter table "broker_settings" drop column "rollover_time", drop column "triple_swap_day";`);

  }

}
