import { Migration } from '@mikro-orm/migrations';

/** The `ib_rewards` and `ib_acquisition` report types. */
export class Migration20261128133100_PartnerReports extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "reports" drop constraint "reports_type_check";`);
    this.addSql(
      `alter table "reports" add constraint "reports_type_check" check ("type" in ('account_statement', 'trades', 'exposure', 'deposits_withdrawals', 'daily', 'promotions', 'ib_rewards', 'ib_acquisition'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "reports" drop constraint "reports_type_check";`);
    this.addSql(
      `alter table "reports" add constraint "reports_type_check" check ("type" in ('account_statement', 'trades', 'exposure', 'deposits_withdrawals', 'daily', 'promotions'));`,
    );
  }
}
