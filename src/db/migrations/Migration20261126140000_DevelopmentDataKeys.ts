import { Migration } from '@mikro-orm/migrations';

/**
 * Secrets at rest move from a key derived from JWT_SECRET to DATA_ENCRYPTION_KEYS. Outside
 * production, when that is unset, the first process stores a development key here and every
 * other process reads it. Values sealed by earlier releases are not touched: they stay
 * readable under JWT_SECRET until the re-seal job moves them (a migration has no key to do it).
 */
export class Migration20261126140000_DevelopmentDataKeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "development_data_keys" ("id" varchar(32) not null, "key" text not null, "created_at" timestamptz not null, constraint "development_data_keys_pkey" primary key ("id"));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "development_data_keys" cascade;`);
  }
}
