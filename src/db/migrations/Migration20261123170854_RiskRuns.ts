import { Migration } from '@mikro-orm/migrations';

/**
 * Risk rule runs (a preview's or an apply's classification, computed by a worker), and a
 * partial index on closed orders by close time for the rolling window the rules aggregate.
 */
export class Migration20261123170854_RiskRuns extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "risk_runs" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "kind" text check ("kind" in ('preview', 'apply')) not null, "rule_id" uuid null, "input" jsonb not null, "window_start" timestamptz not null, "window_end" timestamptz not null, "status" text check ("status" in ('running', 'completed', 'failed')) not null default 'running', "counts" jsonb null, "accounts_evaluated" int null, "requested_by" uuid null, "completed_at" timestamptz null, "error" varchar(500) null, constraint "risk_runs_pkey" primary key ("id"));`);
    this.addSql(`create index "risk_runs_rule_id_created_at_index" on "risk_runs" ("rule_id", "created_at");`);

    this.addSql(`create index "orders_closed_window" on "orders" ("closed_at", "account_id") where "status" = 'closed';`);

  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "risk_runs" cascade;`);

    this.addSql(`drop index "orders_closed_window";`);

  }

}
