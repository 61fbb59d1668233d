-- Writes attempts of webhook deliveries, one row each, numbered after the delivery's earlier
-- ones: the one place every attempt is recorded, whoever records it. The delivery loop
-- (webhook_delivery_steps) gives it the successes of its previous call and the attempt of a
-- worker that stopped mid-request; a failed send is recorded through it by the deliverer.
-- p_attempts is a JSON array of {id (the delivery), attempt_id?, started_at?, duration_ms?,
-- status_code?, error?, response_body?}.
CREATE OR REPLACE FUNCTION public.webhook_attempts_record(p_attempts jsonb)
 RETURNS void
 LANGUAGE sql
AS $function$
  insert into webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
  select coalesce(t.attempt_id, gen_random_uuid()), t.id,
         coalesce((select max(a.attempt) from webhook_attempts a where a.delivery_id = t.id), 0) + 1,
         coalesce(t.started_at, now()), coalesce(t.duration_ms, 0), t.status_code, t.error, t.response_body
    from jsonb_to_recordset(p_attempts)
      as t(id uuid, attempt_id uuid, started_at timestamptz, duration_ms integer, status_code integer, error text, response_body text)
$function$;
