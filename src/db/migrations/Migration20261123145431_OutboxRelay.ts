import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox relay. Events get a write-order number (`seq`) and a partial index of
 * the unpublished ones in that order (the relay's claim and the lag metric read it);
 * `event_inbox` holds one row per event and consumer.
 */
export class Migration20261123145431_OutboxRelay extends Migration {

  override async up(): Promise<void> {
    this.addSql(`create table "event_inbox" ("event_id" uuid not null, "consumer" varchar(64) not null, "event_seq" bigint not null, "created_at" timestamptz not null, "processed_at" timestamptz null, constraint "event_inbox_pkey" primary key ("event_id", "consumer"));`);
    this.addSql(`create index "event_inbox_pending_index" on "event_inbox" ("consumer", "event_seq") where "processed_at" is null;`);

    this.addSql(`alter table "event_inbox" add constraint "event_inbox_event_id_foreign" foreign key ("event_id") references "domain_events" ("id") on update cascade on delete cascade;`);

    this.addSql(`drop index "domain_events_published_at_created_at_index";`);

    // Events written before the sequence existed are numbered in creation order.
    this.addSql(`create sequence if not exists "domain_event_seq";`);
    this.addSql(`alter table "domain_events" add column "seq" bigint null;`);
    this.addSql(
      `update "domain_events" d set "seq" = o.n from (select "id", row_number() over (order by "created_at", "id") as n from "domain_events") o where d."id" = o."id";`,
    );
    this.addSql(`select setval('domain_event_seq', coalesce((select max("seq") from "domain_events"), 0) + 1, false);`);
    this.addSql(`alter table "domain_events" alter column "seq" set default nextval('domain_event_seq'), alter column "seq" set not null;`);
    this.addSql(`alter table "domain_events" add constraint "domain_events_seq_unique" unique ("seq");`);
    this.addSql(`create index "domain_events_unpublished_seq_index" on "domain_events" ("seq") where "published_at" is null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "event_inbox" cascade;`);

    this.addSql(`alter table "domain_events" drop constraint "domain_events_seq_unique";`);
    this.addSql(`drop index "domain_events_unpublished_seq_index";`);
    this.addSql(`alter table "domain_events" drop column "seq";`);
    this.addSql(`drop sequence if exists "domain_event_seq";`);

    this.addSql(`create index "domain_events_published_at_created_at_index" on "domain_events" ("published_at", "created_at");`);
  }

}
