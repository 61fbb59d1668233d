import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook fan-out moves into the outbox relay's transaction: the relay writes the webhooks'
 * messages itself instead of `event_inbox` rows for a `webhooks` consumer that a dispatcher
 * then fanned out. Rows that consumer left unprocessed are fanned out here, as the dispatcher
 * did (subscribed active webhooks, affiliate filter, `webhook.test` to its target), so no
 * event the old relay handed over is lost. Safe to run again: it finds nothing left.
 */
export class Migration20261127130000_WebhookFanOutInRelay extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `with claimed as (
         select i.event_id, i.event_seq, e.type, e.data->>'webhook_id' as target, e.customer_id
           from "event_inbox" i join "domain_events" e on e.id = i.event_id
          where i.consumer = 'webhooks' and i.processed_at is null
       ), fanned as (
         insert into "webhook_messages" (webhook_id, event_id, event_seq, created_at)
         select w.id, c.event_id, c.event_seq, now() from claimed c
           left join "customers" cu on cu.id = c.customer_id
           join "webhooks" w on w.is_active and
                case when c.type = 'webhook.test' then w.id::text = c.target
                     else (w.events is null or jsonb_exists(w.events, c.type))
                          and (w.affiliate_id is null or w.affiliate_id = cu.affiliate_id) end
         on conflict do nothing
       )
       update "event_inbox" set processed_at = now()
        where consumer = 'webhooks' and processed_at is null and event_id in (select event_id from claimed);`,
    );
  }

  override async down(): Promise<void> {
    // Nothing to undo: the messages written are what the dispatcher would have written.
  }
}
