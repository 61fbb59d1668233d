import { Migration } from '@mikro-orm/migrations';

export class Migration20261122185420 extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "mail_messages" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "kind" varchar(64) not null, "to_address" varchar(320) not null, "subject" varchar(998) not null, "text_body" text not null, "html_body" text null, "status" text check ("status" in ('queued', 'sent', 'logged', 'failed')) not null default 'queued', "attempts" int not null default 0, "provider_message_id" varchar(998) null, "last_error" text null, "sent_at" timestamptz null, constraint "mail_messages_pkey" primary key ("id"));`);
    this.addSql(`create index "mail_messages_status_created_at_index" on "mail_messages" ("status", "created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "mail_messages" cascade;`);
  }

}
