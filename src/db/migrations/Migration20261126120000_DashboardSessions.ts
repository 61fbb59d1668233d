import { Migration } from '@mikro-orm/migrations';

/**
 * Sessions of kind `dashboard`: the queue dashboard's sign-in, whose credential is an opaque
 * cookie kept here only as its SHA-256 (unique: the cookie finds its session by it). Every
 * session so far is an API login.
 */
export class Migration20261126120000_DashboardSessions extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "sessions" add column "kind" text check ("kind" in ('api', 'dashboard')) not null default 'api', add column "secret_hash" varchar(64) null;`,
    );
    this.addSql(`alter table "sessions" add constraint "sessions_secret_hash_unique" unique ("secret_hash");`);
  }

  override async down(): Promise<void> {
    this.addSql(`delete from "sessions" where "kind" = 'dashboard';`);
    this.addSql(`alter table "sessions" drop constraint "sessions_secret_hash_unique";`);
    this.addSql(`alter table "sessions" drop column "kind", drop column "secret_hash";`);
  }
}
