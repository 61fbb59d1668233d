import { Migration } from '@mikro-orm/migrations';

/** The `promotions` report type. */
export class Migration20261128113300_PromotionsReport extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "reports" drop constraint "reports_type_check";`);
    this.addSql(
      `alter table "reports" add constraint "reports_type_check" check ("type" in ('account_statement', 'trades', 'exposure', 'deposits_withdrawals', 'daily', 'promotions'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "reports" drop constraint "reports_type_check";`);
    this.addSql(
      `alter table "reports" add constraint "reports_type_check" check ("type" in ('account_statement', 'trades', 'exposure', 'deposits_withdrawals', 'daily'));`,
    );
  }
}
