import { Migration } from '@mikro-orm/migrations';

/**
 * Password-reset requests are handled by a job: each token records the request that made it,
 * under a unique key, so a retried job cannot make a second token or send a second mail.
 */
export class Migration20261126130000_PasswordResetRequests extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "password_reset_tokens" add column "request_id" uuid null;`);
    this.addSql(
      `alter table "password_reset_tokens" add constraint "password_reset_tokens_request_id_unique" unique ("request_id");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "password_reset_tokens" drop constraint "password_reset_tokens_request_id_unique";`);
    this.addSql(`alter table "password_reset_tokens" drop column "request_id";`);
  }
}
