import { Migration } from '@mikro-orm/migrations';
import { sqlFunction } from '../functions/sql-function';
import { STEPS_WITH_HELD } from './Migration20261127140000_WebhookClaimAhead';

/**
 * Every attempt of a webhook delivery is written by one stored function,
 * `webhook_attempts_record`: the delivery loop calls it for its successes and for the attempt of
 * a worker that stopped mid-request, and the deliverer for a failed send, where each used to
 * write the row its own way. The loop's signature is unchanged, so a worker of the previous
 * release keeps working during a rolling deploy.
 */
export class Migration20261128124500_WebhookAttemptsOnePlace extends Migration {
  override async up(): Promise<void> {
    this.addSql(sqlFunction('webhook_attempts_record'));
    this.addSql(STEPS_RECORDING_ATTEMPTS);
  }

  override async down(): Promise<void> {
    this.addSql(STEPS_WITH_HELD);
    this.addSql('drop function if exists webhook_attempts_record(jsonb);');
  }
}

/** The function as this migration created it: a later one replaced it, and its `down` comes back to this. */
export const STEPS_RECORDING_ATTEMPTS = `-- A webhook's delivery loop, many deliveries a call: records the successful attempts of the
-- previous call (p_done, a JSON array of {id, attempt_id, started_at, duration_ms, status_code,
-- response_body}, through webhook_attempts_record), hands back the deliveries it claimed but did not attempt (p_release: their
-- lease and attempt count go back), then claims up to p_claim deliveries under one lease: the
-- oldest open delivery alone when one is due (a retry goes out before anything newer), or else
-- new deliveries of the oldest messages not yet sent, batch_size_max each, in event order. It
-- claims nothing while any delivery of the webhook is leased (in flight), so one webhook never
-- has two requests out and a receiver sees events in order. The one exception is p_held, the
-- deliveries the caller itself holds and is still sending: it may then claim the batches that
-- follow them (new messages only, never a retry), to send after them, so the next claim's
-- round trip overlaps the requests in flight; it claims nothing if the webhook has any other
-- open delivery or any held one is no longer pending under a live lease. VOLATILE PL/pgSQL:
-- every statement takes a fresh snapshot, so the messages are read after the lock on the
-- webhook row is granted.
CREATE OR REPLACE FUNCTION public.webhook_delivery_steps(p_webhook uuid, p_lease_ms integer, p_claim integer, p_done jsonb, p_release jsonb, p_clear_failing boolean, p_held jsonb DEFAULT '[]'::jsonb)
 RETURNS TABLE(delivery_id uuid, endpoint_url text, secret_sealed text, failing boolean, attempts integer, n integer, body text)
 LANGUAGE plpgsql
AS $function$
#variable_conflict use_column
declare
  w record;
  d record;
  v_ids uuid[];
  v_held uuid[] := array(select value::uuid from jsonb_array_elements_text(p_held));
  v_open boolean := false;
begin
  if jsonb_array_length(p_done) > 0 then
    perform webhook_attempts_record(p_done);
    update webhook_deliveries dd set status = 'delivered', delivered_at = now(), lease_until = null, updated_at = now()
     where dd.id in (select (x->>'id')::uuid from jsonb_array_elements(p_done) x);
    if p_clear_failing then
      update webhooks set failing_since = null where id = p_webhook;
    end if;
  end if;
  if jsonb_array_length(p_release) > 0 then
    update webhook_deliveries dd set lease_until = null, attempts = dd.attempts - 1, updated_at = now()
     where dd.id in (select value::uuid from jsonb_array_elements_text(p_release)) and dd.status = 'pending';
  end if;
  if p_claim < 1 then
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
              where dd.webhook_id = p_webhook and dd.status = 'pending' and dd.lease_until > now()
                and dd.id <> all(v_held)) then
    return;
  end if;
  if cardinality(v_held) > 0 then
    -- Batches claimed behind held ones go out only after them: nothing else may be open (a
    -- retry or a redelivery goes first, alone), and the held ones must still be the caller's.
    if exists (select 1 from webhook_deliveries dd
                where dd.webhook_id = p_webhook and dd.status = 'pending' and dd.id <> all(v_held))
       or (select count(*) from webhook_deliveries dd
            where dd.id = any(v_held) and dd.webhook_id = p_webhook and dd.status = 'pending'
              and dd.lease_until > now()) < cardinality(v_held) then
      return;
    end if;
  else
    select dd.id, dd.next_attempt_at <= now() as due, dd.lease_until is not null as abandoned
      into d from webhook_deliveries dd
     where dd.webhook_id = p_webhook and dd.status = 'pending' order by dd.first_event_seq, dd.created_at limit 1;
    v_open := found;
  end if;
  if v_open then
    if not d.due then
      return;
    end if;
    if d.abandoned then
      perform webhook_attempts_record(jsonb_build_array(jsonb_build_object(
        'id', d.id, 'error', 'no outcome recorded: the worker stopped during the attempt')));
    end if;
    update webhook_deliveries dd set attempts = dd.attempts + 1, lease_until = now() + p_lease_ms * interval '1 millisecond',
           updated_at = now() where dd.id = d.id;
    v_ids := array[d.id];
  else
    with b as (
      select u.event_id, u.event_seq, (row_number() over (order by u.event_seq) - 1) / w.batch_size_max as k
        from (select m.event_id, m.event_seq from webhook_messages m
               where m.webhook_id = p_webhook and m.delivery_id is null
               order by m.event_seq limit w.batch_size_max * p_claim) u
    ), g as (
      select b.k, gen_random_uuid() as id, count(*) as n, min(b.event_seq) as first_seq from b group by b.k
    ), ins as (
      insert into webhook_deliveries (id, webhook_id, created_at, updated_at, status, event_count, first_event_seq, attempts, next_attempt_at, lease_until)
      select g.id, p_webhook, now(), now(), 'pending', g.n, g.first_seq, 1, now(), now() + p_lease_ms * interval '1 millisecond'
        from g
      returning id
    ), upd as (
      update webhook_messages m set delivery_id = g.id from b join g on g.k = b.k
       where m.webhook_id = p_webhook and m.event_id = b.event_id
      returning 1
    )
    select array_agg(ins.id) into v_ids from ins where (select count(*) from upd) > 0;
    if v_ids is null then
      return;
    end if;
  end if;

  -- The bodies, built from the stored events in write order: {"events": [{id, type, sequence, created_at, data}]}.
  -- sequence is the event's place in write order, so a receiver can order what a redelivery brings late.
  -- Each delivery's messages by its index and each event by its key, whatever the statistics
  -- say: a join over all of them could hash or scan whole tables for a few dozen rows.
  return query
    select dd.id, w.endpoint_url::text, w.secret_sealed, w.failing, dd.attempts, x.n, json_build_object('events', x.events)::text
      from webhook_deliveries dd
     cross join lateral (
       select count(*)::int as n, coalesce(json_agg((
                select json_build_object('id', e.id, 'type', e.type, 'sequence', m.event_seq,
                         'created_at', to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                         'data', e.data)
                  from domain_events e where e.id = m.event_id) order by m.event_seq), '[]'::json) as events
         from webhook_messages m
        where m.delivery_id = dd.id) x
     where dd.id = any(v_ids) and x.n > 0
     order by dd.first_event_seq;
end
$function$;
`;
