import { Migration } from '@mikro-orm/migrations';

/** Customer notifications, one per domain event at most. */
export class Migration20261123172003_Notifications extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "notifications" ("id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "customer_id" uuid not null, "event_id" uuid not null, "type" varchar(64) not null, "title" varchar(200) not null, "body" text not null, "data" jsonb not null, "read_at" timestamptz null, constraint "notifications_pkey" primary key ("id"));`);
    this.addSql(`alter table "notifications" add constraint "notifications_event_id_unique" unique ("event_id");`);
    this.addSql(`create index "notifications_unread_index" on "notifications" ("customer_id") where "read_at" is null;`);
    this.addSql(`create index "notifications_customer_id_created_at_index" on "notifications" ("customer_id", "created_at");`);

  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "notifications" cascade;`);

  }

}
