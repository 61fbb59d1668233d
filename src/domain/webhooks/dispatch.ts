import type { EntityManager } from '@mikro-orm/postgresql';
import { WEBHOOK_CONSUMER_NAME } from './consumer';

/** Any fixed key: the transaction-level advisory lock that lets one fan-out batch run at a time. */
const DISPATCH_LOCK = 0x77656268;

/**
 * One fan-out batch, in one statement under a lock: claims up to `limit` of the consumer's
 * inbox rows in write order, writes one webhook_messages row per active webhook that
 * subscribes to the event's type (`webhook.test` goes to the webhook it names, only), and
 * marks the rows processed. Batches run one at a time across workers: two committing in
 * parallel could make an account's later event visible to a deliverer before its earlier
 * one. The primary key (webhook, event) is the guard that no event is queued twice for a
 * webhook. Returns the webhooks that got messages.
 */
export async function fanOutBatch(em: EntityManager, limit: number): Promise<'busy' | { events: number; webhooks: string[] }> {
  return em.transactional(async (tx) => {
    const [lock] = await tx.execute<Array<{ locked: boolean }>>('select pg_try_advisory_xact_lock(?) as locked', [DISPATCH_LOCK]);
    if (!lock?.locked) return 'busy' as const;
    const [row] = await tx.execute<Array<{ events: number; webhooks: string[] | null }>>(
      `with claimed as (
         select i.event_id, i.event_seq, e.type, e.data->>'webhook_id' as target
           from event_inbox i join domain_events e on e.id = i.event_id
          where i.consumer = ? and i.processed_at is null
          order by i.event_seq limit ? for update of i skip locked
       ), fanned as (
         insert into webhook_messages (webhook_id, event_id, event_seq, created_at)
         select w.id, c.event_id, c.event_seq, now() from claimed c join webhooks w on w.is_active and
                case when c.type = 'webhook.test' then w.id::text = c.target
                     else w.events is null or jsonb_exists(w.events, c.type) end
         on conflict do nothing
         returning webhook_id
       ), done as (
         update event_inbox set processed_at = now()
          where consumer = ? and event_id in (select event_id from claimed)
         returning 1
       )
       select (select count(*) from done)::int as events, (select json_agg(distinct webhook_id) from fanned) as webhooks`,
      [WEBHOOK_CONSUMER_NAME, limit, WEBHOOK_CONSUMER_NAME],
    );
    return { events: row?.events ?? 0, webhooks: row?.webhooks ?? [] };
  });
}

/**
 * Webhooks with an attempt due that nobody holds: an open delivery whose time has come and
 * whose lease (if any) has lapsed, or messages waiting and no open delivery. What the
 * schedule re-kicks: retries, work whose kick was lost, and deliveries a killed worker left.
 */
export async function webhooksDue(em: EntityManager, limit = 1000): Promise<string[]> {
  const rows = await em.execute<Array<{ id: string }>>(
    `select w.id from webhooks w where w.is_active and (
        exists (select 1 from webhook_deliveries d where d.webhook_id = w.id and d.status = 'pending'
                   and d.next_attempt_at <= now() and (d.lease_until is null or d.lease_until < now()))
        or (exists (select 1 from webhook_messages m where m.webhook_id = w.id and m.delivery_id is null)
            and not exists (select 1 from webhook_deliveries d where d.webhook_id = w.id and d.status = 'pending')))
      limit ?`,
    [limit],
  );
  return rows.map((r) => r.id);
}
