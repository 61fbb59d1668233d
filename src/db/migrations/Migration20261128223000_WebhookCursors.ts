import { Migration } from '@mikro-orm/migrations';
import { sqlFunction } from '../functions/sql-function';
import { STEPS_RECORDING_ATTEMPTS } from './Migration20261128124500_WebhookAttemptsOnePlace';

/** The outbox relay's advisory lock (src/domain/events/relay.ts): held, no relay batch commits meanwhile. */
const RELAY_LOCK = 0x6f7574626f78;

/**
 * Each webhook reads the outbox itself, by a cursor over `publication_seq`, instead of the
 * relay writing a `webhook_messages` row per event and subscribing webhook; a delivery records
 * the events it carries (`event_ids`, and the publication range they lie in, which retention
 * reads). The data moves so that no integrator loses an event or gets one twice:
 * - a delivery's messages become its `event_ids`, so the delivered history stays listable and
 *   redeliverable as it was;
 * - the messages not yet in a delivery become pending deliveries (batch_size_max each, in
 *   write order, no attempt made yet), sent before anything newer;
 * - every cursor starts at the last publication number drawn: every event published before it
 *   was fanned out already, into the messages just moved.
 * Under the relay's lock, so no batch fans out to the old table while it moves. A worker of the
 * previous release still relaying afterwards fails on the dropped table and rolls its batch back
 * (the events stay unpublished for the new release). `down` puts the messages back: those of
 * every delivery, and, not yet in a delivery, the events past each cursor that the webhook takes.
 */
export class Migration20261128223000_WebhookCursors extends Migration {
  override async up(): Promise<void> {
    this.addSql(`select pg_advisory_xact_lock(${RELAY_LOCK});`);
    this.addSql('alter table "webhooks" add column "cursor_seq" bigint null, add column "paused_seq" bigint null;');
    this.addSql(
      `alter table "webhook_deliveries" add column "event_ids" uuid[] null, add column "first_publication_seq" bigint null,
         add column "last_publication_seq" bigint null;`,
    );
    this.addSql(
      `update "webhook_deliveries" d set "event_ids" = x.ids, "first_publication_seq" = x.first_pub, "last_publication_seq" = x.last_pub
         from (select m.delivery_id, array_agg(m.event_id order by m.event_seq) as ids,
                      min(e.publication_seq) as first_pub, max(e.publication_seq) as last_pub
                 from "webhook_messages" m join "domain_events" e on e.id = m.event_id
                where m.delivery_id is not null group by m.delivery_id) x
        where x.delivery_id = d.id;`,
    );
    this.addSql(
      `insert into "webhook_deliveries" ("id", "webhook_id", "created_at", "updated_at", "status", "event_count", "first_event_seq",
                                        "first_publication_seq", "last_publication_seq", "event_ids", "attempts", "next_attempt_at")
       select gen_random_uuid(), b.webhook_id, now(), now(), 'pending', count(*), min(b.event_seq), min(b.publication_seq),
              max(b.publication_seq), array_agg(b.event_id order by b.event_seq), 0, now()
         from (select m.webhook_id, m.event_id, m.event_seq, e.publication_seq,
                      (row_number() over (partition by m.webhook_id order by m.event_seq) - 1) / w.batch_size_max as k
                 from "webhook_messages" m join "webhooks" w on w.id = m.webhook_id join "domain_events" e on e.id = m.event_id
                where m.delivery_id is null) b
        group by b.webhook_id, b.k;`,
    );
    this.addSql(
      `update "webhooks" set "cursor_seq" = (select case when is_called then last_value else last_value - 1 end
                                               from "domain_event_publication_seq");`,
    );
    this.addSql(
      `alter table "webhooks" alter column "cursor_seq" set default nextval('domain_event_publication_seq'),
         alter column "cursor_seq" set not null;`,
    );
    // A delivery whose messages are all gone (none should be) carries nothing; an event never
    // numbered (none after the publication-order migration) lies in no range.
    this.addSql(
      `update "webhook_deliveries" set "event_ids" = coalesce("event_ids", '{}'), "first_publication_seq" = coalesce("first_publication_seq", 0),
         "last_publication_seq" = coalesce("last_publication_seq", 0)
        where "event_ids" is null or "first_publication_seq" is null or "last_publication_seq" is null;`,
    );
    this.addSql(
      `alter table "webhook_deliveries" alter column "event_ids" set not null, alter column "first_publication_seq" set not null,
         alter column "last_publication_seq" set not null;`,
    );
    this.addSql('drop table "webhook_messages";');
    this.addSql(sqlFunction('webhook_delivery_steps'));
  }

  override async down(): Promise<void> {
    this.addSql(`select pg_advisory_xact_lock(${RELAY_LOCK});`);
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
    this.addSql(
      `create index "webhook_messages_unbatched_index" on "webhook_messages" ("webhook_id", "event_seq") where "delivery_id" is null;`,
    );
    this.addSql(`create index "webhook_messages_delivery_index" on "webhook_messages" ("delivery_id", "event_seq");`);
    // Filled once its keys and indexes exist: the indexes are built on the empty table.
    this.addSql(
      `insert into "webhook_messages" ("webhook_id", "event_id", "event_seq", "delivery_id", "created_at")
       select d.webhook_id, e.id, e.seq, d.id, d.created_at
         from "webhook_deliveries" d cross join lateral unnest(d.event_ids) as u(event_id) join "domain_events" e on e.id = u.event_id
       on conflict do nothing;`,
    );
    // What the cursors have yet to read (and what a webhook turned off still owes) becomes
    // messages not yet in a delivery, as the previous release's fan-out would have made them.
    this.addSql(
      `insert into "webhook_messages" ("webhook_id", "event_id", "event_seq", "created_at")
       select w.id, e.id, e.seq, now()
         from "webhooks" w
         join "domain_events" e on e.publication_seq > w.cursor_seq and (w.is_active or e.publication_seq <= w.paused_seq)
         left join "customers" cu on cu.id = e.customer_id
        where case when e.type = 'webhook.test' then e.data->>'webhook_id' = w.id::text
                   else (w.events is null or jsonb_exists(w.events, e.type))
                        and (w.affiliate_id is null or w.affiliate_id = cu.affiliate_id) end
       on conflict do nothing;`,
    );
    this.addSql(STEPS_RECORDING_ATTEMPTS);
    this.addSql(
      'alter table "webhook_deliveries" drop column "event_ids", drop column "first_publication_seq", drop column "last_publication_seq";',
    );
    this.addSql('alter table "webhooks" drop column "cursor_seq", drop column "paused_seq";');
  }
}
