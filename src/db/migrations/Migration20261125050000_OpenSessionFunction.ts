import { Migration } from '@mikro-orm/migrations';

/**
 * A login's session statement as functions, so Postgres plans it once per connection.
 *
 * `open_session` writes the session row and its first refresh token and answers the
 * access-token lifetime and, for staff, the permissions the session cache starts with: what
 * the login sent as one CTE, whose parsing and planning were about half of Postgres's work for
 * it on every login (pgbench on the same rows: 0.78 ms of CPU per call as a statement, 0.51 as
 * this function). A PL/pgSQL function keeps the plans of its statements for the life of the
 * connection, and unlike named prepared statements that also holds behind PgBouncer in
 * transaction pooling mode. One call is one statement, so atomic as the CTE was. Columns as the
 * Session and RefreshToken entities map them.
 *
 * `user_permissions` is the one definition of a staff user's permissions (the union over the
 * user's roles, sorted byte-wise): the login, the session cache's fill on a miss and API
 * tokens all read it. PL/pgSQL for the same reason (a SQL function called from PL/pgSQL is
 * planned again in every transaction).
 */
export class Migration20261125050000_OpenSessionFunction extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function user_permissions(p_user uuid) returns text[]
      language plpgsql stable as $fn$
      begin
        return (select coalesce(array_agg(distinct p collate "C" order by p collate "C"), '{}')
          from roles r join staff_user_roles ur on ur.role_id = r.id, unnest(r.permissions) p
          where ur.staff_user_id = p_user);
      end $fn$;`);
    this.addSql(`create or replace function open_session(
        p_session uuid, p_now timestamptz, p_type text, p_principal uuid, p_ip text, p_user_agent text,
        p_expires timestamptz, p_token uuid, p_token_hash text,
        out ttl int, out permissions text[])
      language plpgsql volatile as $fn$
      begin
        insert into sessions (id, created_at, updated_at, principal_type, principal_id, ip, user_agent, last_used_at, expires_at)
          values (p_session, p_now, p_now, p_type, p_principal, p_ip, p_user_agent, p_now, p_expires);
        insert into refresh_tokens (id, created_at, updated_at, session_id, token_hash, expires_at)
          values (p_token, p_now, p_now, p_session, p_token_hash, p_expires);
        ttl := (select access_token_ttl_seconds from broker_settings where id = 1);
        permissions := case when p_type = 'user' then user_permissions(p_principal) else '{}'::text[] end;
      end $fn$;`);
  }

  override async down(): Promise<void> {
    this.addSql('drop function if exists open_session(uuid, timestamptz, text, uuid, text, text, timestamptz, uuid, text);');
    this.addSql('drop function if exists user_permissions(uuid);');
  }
}
