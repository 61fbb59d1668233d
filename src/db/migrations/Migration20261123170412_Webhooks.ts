import { Migration } from '@mikro-orm/migrations';

/**
 * Webhooks. `webhooks` holds the endpoints (the secret sealed, never readable
 * through the API); `webhook_messages` one row per event and webhook that is to get it,
 * written by the dispatcher from the `webhooks` consumer's inbox; `webhook_deliveries` one
 * batch of messages sent as one request (its id is the `webhook-id` header, kept across
 * retries); `webhook_attempts` every try of a delivery.
 */
export class Migration20261123170412_Webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "webhooks" (
      "id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null,
      "endpoint_url" varchar(2048) not null, "secret_sealed" text not null, "is_active" boolean not null default true,
      "batch_size_max" int not null default 100, "affiliate_id" varchar(255) null, "events" jsonb null,
      "disabled_reason" varchar(255) null, "failing_since" timestamptz null,
      constraint "webhooks_pkey" primary key ("id"),
      constraint "webhooks_batch_size_max_check" check ("batch_size_max" between 1 and 1000));`);

    this.addSql(`create table "webhook_deliveries" (
      "id" uuid not null, "webhook_id" uuid not null, "created_at" timestamptz not null, "updated_at" timestamptz not null,
      "status" varchar(16) not null default 'pending', "event_count" int not null, "first_event_seq" bigint not null,
      "attempts" int not null default 0, "next_attempt_at" timestamptz not null, "lease_until" timestamptz null,
      "delivered_at" timestamptz null,
      constraint "webhook_deliveries_pkey" primary key ("id"),
      constraint "webhook_deliveries_status_check" check ("status" in ('pending', 'delivered', 'failed')));`);
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_webhook_id_foreign" foreign key ("webhook_id") references "webhooks" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`create index "webhook_deliveries_list_index" on "webhook_deliveries" ("webhook_id", "created_at");`);
    // What the sweeper and the deliverer look for: open deliveries, by when they are due.
    this.addSql(
      `create index "webhook_deliveries_pending_index" on "webhook_deliveries" ("next_attempt_at") where "status" = 'pending';`,
    );

    this.addSql(`create table "webhook_messages" (
      "webhook_id" uuid not null, "event_id" uuid not null, "event_seq" bigint not null, "delivery_id" uuid null,
      "created_at" timestamptz not null,
      constraint "webhook_messages_pkey" primary key ("webhook_id", "event_id"));`);
    this.addSql(
      `alter table "webhook_messages" add constraint "webhook_messages_webhook_id_foreign" foreign key ("webhook_id") references "webhooks" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_messages" add constraint "webhook_messages_event_id_foreign" foreign key ("event_id") references "domain_events" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_messages" add constraint "webhook_messages_delivery_id_foreign" foreign key ("delivery_id") references "webhook_deliveries" ("id") on update cascade on delete set null;`,
    );
    // Messages not yet in a delivery, in write order per webhook: the next batch.
    this.addSql(
      `create index "webhook_messages_unbatched_index" on "webhook_messages" ("webhook_id", "event_seq") where "delivery_id" is null;`,
    );
    this.addSql(`create index "webhook_messages_delivery_index" on "webhook_messages" ("delivery_id", "event_seq");`);

    this.addSql(`create table "webhook_attempts" (
      "id" uuid not null, "delivery_id" uuid not null, "attempt" int not null, "started_at" timestamptz not null,
      "duration_ms" int not null, "status_code" int null, "error" varchar(500) null, "response_body" text null,
      constraint "webhook_attempts_pkey" primary key ("id"));`);
    this.addSql(
      `alter table "webhook_attempts" add constraint "webhook_attempts_delivery_id_foreign" foreign key ("delivery_id") references "webhook_deliveries" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`create index "webhook_attempts_delivery_index" on "webhook_attempts" ("delivery_id", "attempt");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "webhook_attempts" cascade;`);
    this.addSql(`drop table if exists "webhook_messages" cascade;`);
    this.addSql(`drop table if exists "webhook_deliveries" cascade;`);
    this.addSql(`drop table if exists "webhooks" cascade;`);
  }
}
