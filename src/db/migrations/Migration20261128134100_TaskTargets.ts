import { Migration } from '@mikro-orm/migrations';

/** Task targets: the records a task is about besides its customer, one row per record. */
export class Migration20261128134100_TaskTargets extends Migration {
  override name = 'Migration20261128134100_TaskTargets';

  override up(): void | Promise<void> {
    this.addSql(`create table "task_targets" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "task_id" uuid not null, "deposit_id" uuid null, "withdrawal_id" uuid null, "document_id" uuid null, "conversation_id" uuid null, "payout_id" uuid null, primary key ("id"));`);
    this.addSql(`create index "task_targets_task_id_index" on "task_targets" ("task_id");`);
    this.addSql(`create index "task_targets_payout_id_index" on "task_targets" ("payout_id");`);
    this.addSql(`create index "task_targets_conversation_id_index" on "task_targets" ("conversation_id");`);
    this.addSql(`create index "task_targets_document_id_index" on "task_targets" ("document_id");`);
    this.addSql(`create index "task_targets_withdrawal_id_index" on "task_targets" ("withdrawal_id");`);
    this.addSql(`create index "task_targets_deposit_id_index" on "task_targets" ("deposit_id");`);

    this.addSql(`alter table "task_targets" add constraint "task_targets_task_id_foreign" foreign key ("task_id") references "tasks" ("id") on update cascade on delete cascade;`);
    this.addSql(`alter table "task_targets" add constraint "task_targets_one_record" check (num_nonnulls(deposit_id, withdrawal_id, document_id, conversation_id, payout_id) = 1);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "task_targets" cascade;`);

  }

}
