import { Migration } from '@mikro-orm/migrations';

/**
 * Reports built by the workers (decisions, section 14): the request and its status in
 * `reports`, the file in `report_chunks` (about 1 MiB of bytes a row, deleted with its
 * report), and the broker's name that report titles carry.
 */
export class Migration20261127070000_Reports extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "reports" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "type" text check ("type" in ('account_statement', 'trades', 'exposure', 'deposits_withdrawals', 'daily')) not null, "format" text check ("format" in ('csv', 'pdf', 'json')) not null, "params" jsonb not null, "status" text check ("status" in ('queued', 'running', 'completed', 'failed')) not null default 'queued', "rows" bigint null, "bytes" bigint null, "error" text null, "requested_by" uuid null, "customer_id" uuid null, "started_at" timestamptz null, "finished_at" timestamptz null, constraint "reports_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "reports_finished_at_index" on "reports" ("finished_at");`);
    this.addSql(`create index "reports_customer_id_created_at_index" on "reports" ("customer_id", "created_at");`);
    this.addSql(
      `create table "report_chunks" ("report_id" uuid not null, "seq" int not null, "data" bytea not null, constraint "report_chunks_pkey" primary key ("report_id", "seq"));`,
    );
    this.addSql(
      `alter table "report_chunks" add constraint "report_chunks_report_id_foreign" foreign key ("report_id") references "reports" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`alter table "broker_settings" add column "broker_name" varchar(200) not null default 'Trading Infrastructure';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "report_chunks" cascade;`);
    this.addSql(`drop table if exists "reports" cascade;`);
    this.addSql(`alter table "broker_settings" drop column if exists "broker_name";`);
  }
}
