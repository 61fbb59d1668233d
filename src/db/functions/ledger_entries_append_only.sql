-- Trigger function of ledger_entries_no_update: the ledger is append-only, a correction is a
-- new row, never an edit.
CREATE OR REPLACE FUNCTION public.ledger_entries_append_only()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$ begin raise exception 'ledger_entries is append-only'; end $function$;
