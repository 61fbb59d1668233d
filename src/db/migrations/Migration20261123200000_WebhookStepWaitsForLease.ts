import { Migration } from '@mikro-orm/migrations';
import { Migration20261123173600_WebhookDeliveryStep } from './Migration20261123173600_WebhookDeliveryStep';

/**
 * `webhook_delivery_step` waits while any open delivery of the webhook is leased, not only
 * the oldest. A redelivery reopens an old batch, which sorts first: the old check saw it
 * unleased and due and sent it while a newer batch was still in flight, so one webhook had
 * two requests out at once and a receiver could see events out of order. The function is
 * otherwise the one of migration 20261123173600, which keeps its own text; this one keeps its
 * own too (the function was dropped once nothing called it).
 */
export class Migration20261123200000_WebhookStepWaitsForLease extends Migration {
  override async up(): Promise<void> {
    this.addSql(WAITS_FOR_LEASE_STEP);
  }

  override async down(): Promise<void> {
    // Back to the earlier function: that migration's own statement, not a copy of it.
    const previous = new Migration20261123173600_WebhookDeliveryStep(this.driver, this.config);
    await previous.up();
    for (const query of previous.getQueries()) this.addSql(query);
  }
}

/** The function's text as this migration created it. */
export const WAITS_FOR_LEASE_STEP = `-- One step of a webhook's delivery loop: records the outcome of the previous attempt (p_done),
-- then claims the next batch under a lease, unless any delivery of the webhook is leased (in
-- flight), so one webhook never has two requests out and a receiver sees events in order.
-- VOLATILE PL/pgSQL: every statement takes a fresh snapshot, so the messages are read after
-- the lock on the webhook row is granted.
CREATE OR REPLACE FUNCTION public.webhook_delivery_step(p_webhook uuid, p_lease_ms integer, p_new_id uuid, p_claim boolean, p_done uuid, p_attempt_id uuid, p_started timestamp with time zone, p_duration integer, p_status integer, p_response text, p_clear_failing boolean)
 RETURNS TABLE(delivery_id uuid, endpoint_url text, secret_sealed text, failing boolean, attempts integer, n integer, body text)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_column
declare
  w record;
  d record;
  v_id uuid;
  v_attempts int;
  v_marked int;
begin
  if p_done is not null then
    insert into webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
      select p_attempt_id, p_done, coalesce(max(a.attempt), 0) + 1, p_started, p_duration, p_status, null, p_response
        from webhook_attempts a where a.delivery_id = p_done;
    update webhook_deliveries set status = 'delivered', delivered_at = now(), lease_until = null, updated_at = now() where id = p_done;
    if p_clear_failing then
      update webhooks set failing_since = null where id = p_webhook;
    end if;
  end if;
  if not p_claim then
    return;
  end if;

  -- NO KEY UPDATE: the dispatcher's message inserts (foreign keys to this row) need not wait.
  select ww.endpoint_url, ww.secret_sealed, ww.batch_size_max, ww.is_active, ww.failing_since is not null as failing
    into w from webhooks ww where ww.id = p_webhook for no key update;
  if not found or not w.is_active then
    return;
  end if;
  -- Any delivery of this webhook under a live lease is in flight: wait for it. Not only the
  -- oldest open one: a redelivered older batch would otherwise go out beside a newer one.
  if exists (select 1 from webhook_deliveries dd
              where dd.webhook_id = p_webhook and dd.status = 'pending' and dd.lease_until > now()) then
    return;
  end if;
  select dd.id, dd.next_attempt_at <= now() as due, dd.lease_until is not null as abandoned
    into d from webhook_deliveries dd
   where dd.webhook_id = p_webhook and dd.status = 'pending' order by dd.first_event_seq, dd.created_at limit 1;
  if found then
    if not d.due then
      return;
    end if;
    if d.abandoned then
      insert into webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
        select gen_random_uuid(), d.id, coalesce(max(a.attempt), 0) + 1, now(), 0, null,
               'no outcome recorded: the worker stopped during the attempt', null
          from webhook_attempts a where a.delivery_id = d.id;
    end if;
    update webhook_deliveries dd set attempts = dd.attempts + 1, lease_until = now() + p_lease_ms * interval '1 millisecond',
           updated_at = now() where dd.id = d.id returning dd.attempts into v_attempts;
    v_id := d.id;
  else
    with b as (
      select m.event_id, m.event_seq from webhook_messages m
       where m.webhook_id = p_webhook and m.delivery_id is null order by m.event_seq limit w.batch_size_max
    ), ins as (
      insert into webhook_deliveries (id, webhook_id, created_at, updated_at, status, event_count, first_event_seq, attempts, next_attempt_at, lease_until)
      select p_new_id, p_webhook, now(), now(), 'pending', count(*), min(b.event_seq), 1, now(), now() + p_lease_ms * interval '1 millisecond'
        from b having count(*) > 0
      returning id
    ), upd as (
      update webhook_messages m set delivery_id = ins.id from ins, b where m.webhook_id = p_webhook and m.event_id = b.event_id
      returning 1
    )
    select count(*) into v_marked from upd;
    if v_marked = 0 then
      return;
    end if;
    v_id := p_new_id;
    v_attempts := 1;
  end if;

  -- The body, built from the stored events in write order: {"events": [{id, type, created_at, data}]}.
  return query
    select v_id, w.endpoint_url::text, w.secret_sealed, w.failing, v_attempts, count(*)::int,
           json_build_object('events', coalesce(json_agg(json_build_object(
             'id', e.id, 'type', e.type,
             'created_at', to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'data', e.data) order by m.event_seq), '[]'::json))::text
      from webhook_messages m join domain_events e on e.id = m.event_id where m.delivery_id = v_id;
end
$function$;
`;
