-- Trigger function of domain_events_notify: wakes the outbox relay's listener when events
-- commit. Postgres delivers a NOTIFY at the commit of the transaction that sent it (never for
-- one rolled back), folds repeats of one channel and payload within a transaction into one,
-- and the trigger fires once per statement, however many rows it inserts.
CREATE OR REPLACE FUNCTION public.domain_events_notify()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$ begin perform pg_notify('domain_events', ''); return null; end $function$;
