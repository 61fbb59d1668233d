-- A login's session row and first refresh token in one statement, answering the access-token
-- lifetime and, for staff, the permissions the session cache starts with. PL/pgSQL so its
-- statements are planned once per connection (also behind PgBouncer in transaction mode).
CREATE OR REPLACE FUNCTION public.open_session(p_session uuid, p_now timestamp with time zone, p_type text, p_principal uuid, p_ip text, p_user_agent text, p_expires timestamp with time zone, p_token uuid, p_token_hash text, OUT ttl integer, OUT permissions text[])
 RETURNS record
 LANGUAGE plpgsql
AS $function$
begin
  insert into sessions (id, created_at, updated_at, principal_type, principal_id, ip, user_agent, last_used_at, expires_at)
    values (p_session, p_now, p_now, p_type, p_principal, p_ip, p_user_agent, p_now, p_expires);
  insert into refresh_tokens (id, created_at, updated_at, session_id, token_hash, expires_at)
    values (p_token, p_now, p_now, p_session, p_token_hash, p_expires);
  ttl := (select access_token_ttl_seconds from broker_settings where id = 1);
  permissions := case when p_type = 'user' then user_permissions(p_principal) else '{}'::text[] end;
end $function$;
