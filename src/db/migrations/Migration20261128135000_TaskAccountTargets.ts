import { Migration } from '@mikro-orm/migrations';

/** A task may target one of its customer's accounts, named by its login as every account route names it. */
export class Migration20261128135000_TaskAccountTargets extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "task_targets" add column "account_login" varchar(20) null;');
    this.addSql('create index "task_targets_account_login_index" on "task_targets" ("account_login");');
    this.addSql('alter table "task_targets" drop constraint "task_targets_one_record";');
    this.addSql(
      `alter table "task_targets" add constraint "task_targets_one_record" check (num_nonnulls(account_login, deposit_id, withdrawal_id, document_id, conversation_id, payout_id) = 1);`,
    );
  }

  override async down(): Promise<void> {
    this.addSql('delete from "task_targets" where "account_login" is not null;');
    this.addSql('alter table "task_targets" drop constraint "task_targets_one_record";');
    this.addSql(
      `alter table "task_targets" add constraint "task_targets_one_record" check (num_nonnulls(deposit_id, withdrawal_id, document_id, conversation_id, payout_id) = 1);`,
    );
    this.addSql('drop index "task_targets_account_login_index";');
    this.addSql('alter table "task_targets" drop column "account_login";');
  }
}
