import { Migration } from '@mikro-orm/migrations';

/**
 * reports.requeued_at: when the sweep queued the build of a report whose job was lost from
 * the queue. A report's build is queued again once; a second loss fails the report.
 * The partial index serves the sweep, which reads only the reports not yet finished.
 */
export class Migration20261128090000_ReportRequeue extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "reports" add column "requeued_at" timestamptz null;`);
    this.addSql(
      `create index "reports_unfinished_index" on "reports" ("updated_at") where "status" in ('queued', 'running');`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "reports_unfinished_index";`);
    this.addSql(`alter table "reports" drop column "requeued_at";`);
  }
}
