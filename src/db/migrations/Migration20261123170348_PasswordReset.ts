import { Migration } from '@mikro-orm/migrations';

/**
 * Password-reset tokens (hashed, one hour, single use), and the mail states
 * `sending` (committed before the SMTP hand-off) and `unknown` (its worker died mid-send).
 */
export class Migration20261123170348_PasswordReset extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "password_reset_tokens" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "customer_id" uuid not null, "token_hash" varchar(64) not null, "expires_at" timestamptz not null, "used_at" timestamptz null, constraint "password_reset_tokens_pkey" primary key ("id"));`);
    this.addSql(`alter table "password_reset_tokens" add constraint "password_reset_tokens_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "password_reset_tokens_customer_id_index" on "password_reset_tokens" ("customer_id");`);

    this.addSql(`alter table "mail_messages" drop constraint if exists "mail_messages_status_check";`);

    this.addSql(`alter table "mail_messages" add constraint "mail_messages_status_check" check("status" in ('queued', 'sending', 'sent', 'logged', 'failed', 'unknown'));`);
    this.addSql(`create index "mail_messages_sending_index" on "mail_messages" ("updated_at") where "status" = 'sending';`);

  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "password_reset_tokens" cascade;`);
    this.addSql(`drop index "mail_messages_sending_index";`);
    this.addSql(`update "mail_messages" set "status" = 'failed' where "status" in ('sending', 'unknown');`);

    this.addSql(`alter table "mail_messages" drop constraint if exists "mail_messages_status_check";`);

    this.addSql(`alter table "mail_messages" add constraint "mail_messages_status_check" check("status" in ('queued', 'sent', 'logged', 'failed'));`);

  }

}
