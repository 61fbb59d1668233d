-- A webhook's delivery loop, many deliveries a call: records the successful attempts of the
-- previous call (p_done, a JSON array of {id, attempt_id, started_at, duration_ms, status_code,
-- response_body}, through webhook_attempts_record), hands back the deliveries it claimed but did not attempt (p_release: their
-- lease and attempt count go back), then claims up to p_claim deliveries under one lease: the
-- oldest open delivery alone when one is due (a retry goes out before anything newer), or else
-- new deliveries of the next events past the webhook's cursor, batch_size_max each, in
-- publication order. It claims nothing while any delivery of the webhook is leased (in
-- flight), so one webhook never has two requests out and a receiver sees events in order. The
-- one exception is p_held, the deliveries the caller itself holds and is still sending: it may
-- then claim the batches that follow them (new events only, never a retry), to send after
-- them, so the next claim's round trip overlaps the requests in flight; it claims nothing if
-- the webhook has any other open delivery or any held one is no longer pending under a live
-- lease. VOLATILE PL/pgSQL: every statement takes a fresh snapshot, so the events are read
-- after the lock on the webhook row is granted.
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

  -- NO KEY UPDATE: the deliveries' foreign keys to this row need not wait; the claim moves the cursor.
  select ww.endpoint_url, ww.secret_sealed, ww.batch_size_max, ww.is_active, ww.failing_since is not null as failing,
         ww.events, ww.affiliate_id, ww.cursor_seq
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
    -- The events past the cursor that this webhook takes, read from the outbox in publication
    -- order: relay batches commit one at a time in that order, so what one snapshot sees
    -- there is a prefix, and an event committed late is never behind the cursor. The filters
    -- apply here (its types; with an affiliate_id, the events about that affiliate's
    -- customers; webhook.test only to the webhook it names). One statement, one snapshot: the
    -- events taken and the cursor's new place must agree. A claim looks at most 10,000
    -- publication numbers ahead, so a webhook that takes few types does not read the whole
    -- backlog at once; the cursor moves past what it looked at either way.
    with hit as (
      select e.id, e.seq, e.publication_seq, row_number() over (order by e.publication_seq) as r
        from (select e.id, e.seq, e.publication_seq from domain_events e
                left join customers cu on cu.id = e.customer_id
               where e.publication_seq > w.cursor_seq and e.publication_seq <= w.cursor_seq + 10000
                 and case when e.type = 'webhook.test' then e.data->>'webhook_id' = p_webhook::text
                          else (w.events is null or jsonb_exists(w.events, e.type))
                               and (w.affiliate_id is null or w.affiliate_id = cu.affiliate_id) end
               order by e.publication_seq limit w.batch_size_max * p_claim) e
    ), seen as (
      -- The last event in the window; with none there, just short of the next one beyond it,
      -- so a gap of more than the window in the numbering does not hold the cursor back.
      select coalesce(
               (select e.publication_seq from domain_events e
                 where e.publication_seq > w.cursor_seq and e.publication_seq <= w.cursor_seq + 10000
                 order by e.publication_seq desc limit 1),
               (select e.publication_seq - 1 from domain_events e
                 where e.publication_seq > w.cursor_seq order by e.publication_seq limit 1)) as last_seq
    ), g as (
      select (h.r - 1) / w.batch_size_max as k, gen_random_uuid() as id, count(*)::int as n, min(h.seq) as first_seq,
             min(h.publication_seq) as first_pub, max(h.publication_seq) as last_pub,
             array_agg(h.id order by h.publication_seq) as event_ids
        from hit h group by 1
    ), ins as (
      insert into webhook_deliveries (id, webhook_id, created_at, updated_at, status, event_count, first_event_seq,
                                      first_publication_seq, last_publication_seq, event_ids, attempts, next_attempt_at, lease_until)
      select g.id, p_webhook, now(), now(), 'pending', g.n, g.first_seq, g.first_pub, g.last_pub, g.event_ids, 1, now(),
             now() + p_lease_ms * interval '1 millisecond'
        from g
      returning id
    ), moved as (
      -- A full claim stops at its last event (more may follow that this claim did not look at);
      -- a short one has looked at everything up to the last event it saw.
      update webhooks ww set cursor_seq = case
               when (select count(*) from hit) >= w.batch_size_max * p_claim then (select max(h.publication_seq) from hit h)
               else coalesce((select seen.last_seq from seen), ww.cursor_seq) end
       where ww.id = p_webhook
    )
    select array_agg(ins.id) into v_ids from ins;
    if v_ids is null then
      return;
    end if;
  end if;

  -- The bodies, built from the stored events in publication order: {"events": [{id, type, sequence, created_at, data}]}.
  -- sequence is the event's place in write order, so a receiver can order what a redelivery brings late.
  -- Each event by its key, whatever the statistics say: a join over all of them could hash or
  -- scan the whole outbox for a few dozen rows.
  return query
    select dd.id, w.endpoint_url::text, w.secret_sealed, w.failing, dd.attempts, x.n, json_build_object('events', x.events)::text
      from webhook_deliveries dd
     cross join lateral (
       select count(*)::int as n, coalesce(json_agg((
                select json_build_object('id', e.id, 'type', e.type, 'sequence', e.seq,
                         'created_at', to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                         'data', e.data)
                  from domain_events e where e.id = u.event_id) order by u.k), '[]'::json) as events
         from unnest(dd.event_ids) with ordinality as u(event_id, k)) x
     where dd.id = any(v_ids) and x.n > 0
     order by dd.first_event_seq;
end
$function$;
