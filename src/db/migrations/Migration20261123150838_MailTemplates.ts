import { Migration } from '@mikro-orm/migrations';

/**
 * Mail is rendered by the worker from a template key, locale and data; secret
 * values are sealed in `secret_data` and erased once the mail is final; no body is stored.
 * Rows written before carried rendered bodies, which may hold reset links: the bodies go,
 * and a row still queued then can no longer be sent, so it is marked failed.
 */
export class Migration20261123150838_MailTemplates extends Migration {

  override async up(): Promise<void> {
    this.addSql(`drop index "mail_messages_status_created_at_index";`);

    this.addSql(`update "mail_messages" set "status" = 'failed', "last_error" = 'not sent: queued before mails were rendered from templates', "updated_at" = now() where "status" = 'queued';`);
    this.addSql(`alter table "mail_messages" drop column "text_body", drop column "html_body";`);
    this.addSql(`alter table "mail_messages" rename column "kind" to "template";`);
    this.addSql(`alter table "mail_messages" add column "locale" varchar(35) not null default 'en', add column "data" jsonb not null default '{}', add column "secret_data" text null;`);
    this.addSql(`alter table "mail_messages" alter column "locale" drop default, alter column "data" drop default;`);
    this.addSql(`alter table "mail_messages" alter column "subject" drop not null;`);
    this.addSql(`create index "mail_messages_queued_index" on "mail_messages" ("updated_at") where "status" = 'queued';`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "mail_messages_queued_index";`);

    this.addSql(`update "mail_messages" set "subject" = '' where "subject" is null;`);
    this.addSql(`alter table "mail_messages" alter column "subject" set not null;`);
    this.addSql(`alter table "mail_messages" drop column "locale", drop column "data", drop column "secret_data";`);
    this.addSql(`alter table "mail_messages" rename column "template" to "kind";`);
    this.addSql(`alter table "mail_messages" add column "text_body" text not null default '', add column "html_body" text null;`);
    this.addSql(`alter table "mail_messages" alter column "text_body" drop default;`);
    this.addSql(`create index "mail_messages_status_created_at_index" on "mail_messages" ("status", "created_at");`);
  }

}
