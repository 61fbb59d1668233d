import { Migration } from '@mikro-orm/migrations';

/** A mail row names the send run that claimed it, so a batch's rows are told from another run's. */
export class Migration20261128152000_MailClaims extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table "mail_messages" add column "claimed_by" varchar(64) null;');
  }

  override async down(): Promise<void> {
    this.addSql('alter table "mail_messages" drop column "claimed_by";');
  }
}
