import type { PrincipalType } from '../../entities/session.entity';
import { namedStatement } from '../../platform/named-sql';

/**
 * The hand-written statements of sign-in, sessions, second factors and staff administration,
 * with named parameters. Most are the hot paths of a login or a request (one round trip where
 * the unit of work took several) or check-and-set updates that must be one statement.
 */

const PRINCIPAL_TABLE: Record<PrincipalType, string> = { user: 'staff_users', customer: 'customers' };
const perPrincipal = <P extends object>(text: (table: string) => string) => ({
  user: namedStatement<P>(text(PRINCIPAL_TABLE.user)),
  customer: namedStatement<P>(text(PRINCIPAL_TABLE.customer)),
});

/** The login's principal as one plain row; columns as the PrincipalEntity maps them, under the property names. */
/** Whether a principal may log in: a customer moderated to `no_login` counts as inactive, answered as a wrong password. */
const MAY_LOG_IN: Record<string, string> = { customers: `is_active and access <> 'no_login'` };

export const LOGIN_PRINCIPAL = perPrincipal<{ email: string }>(
  (table) =>
    `select id, password_hash as "passwordHash", ${MAY_LOG_IN[table] ?? 'is_active'} as "isActive", totp_enabled as "totpEnabled", totp_secret as "totpSecret" from ${table} where email = :email`,
);

/** The union of a staff user's role permissions, sorted (src/db/functions/user_permissions.sql). */
export const USER_PERMISSIONS = namedStatement<{ user_id: string }>('select user_permissions(:user_id::uuid) as permissions');

/**
 * A login's session and first refresh token, the access-token lifetime and the permissions
 * in one call of open_session (src/db/functions/open_session.sql), whose plans are kept per
 * connection.
 */
export const OPEN_SESSION = namedStatement<{
  session_id: string;
  now: Date;
  type: PrincipalType;
  principal_id: string;
  ip: string | null;
  user_agent: string | null;
  expires_at: Date;
  token_id: string;
  token_hash: string;
}>(
  `select ttl, permissions from open_session(:session_id::uuid, :now::timestamptz, :type::text, :principal_id::uuid,
    :ip::text, :user_agent::text, :expires_at::timestamptz, :token_id::uuid, :token_hash::text)`,
);

/** Consumes a refresh token: one conditional update, so a token is exchanged at most once. */
export const CONSUME_REFRESH_TOKEN = namedStatement<{ token_hash: string }>(
  `update refresh_tokens set used_at = now(), updated_at = now()
    where token_hash = :token_hash and used_at is null and expires_at > now() returning session_id`,
);

/** Finds a live dashboard session, slides its end, and reads the user's current permissions. */
export const TOUCH_DASHBOARD_SESSION = namedStatement<{ absolute_seconds: number; idle_seconds: number; secret_hash: string }>(
  `with touched as (
     update sessions s
        set last_used_at = now(), updated_at = now(),
            expires_at = least(s.created_at + make_interval(secs => :absolute_seconds), now() + make_interval(secs => :idle_seconds))
      where s.secret_hash = :secret_hash and s.kind = 'dashboard' and s.principal_type = 'user'
        and s.revoked_at is null and s.expires_at > now()
      returning s.id, s.principal_id)
   select t.id, t.principal_id, user_permissions(t.principal_id) as permissions
     from touched t join staff_users u on u.id = t.principal_id
    where u.is_active`,
);

/** Accepts a TOTP step only if no code of that step or a later one was accepted before. */
export const ACCEPT_TOTP_STEP = perPrincipal<{ step: number; id: string }>(
  (table) =>
    `update ${table} set totp_last_step = :step where id = :id and (totp_last_step is null or totp_last_step < :step) returning 1`,
);

export const CONSUME_BACKUP_CODE = namedStatement<{ code_hash: string; type: PrincipalType; principal_id: string }>(
  `update totp_backup_codes set used_at = now(), updated_at = now()
    where code_hash = :code_hash and principal_type = :type and principal_id = :principal_id and used_at is null returning 1`,
);

/** A transaction-level advisory lock: staff administration and the first-run bootstrap each take their own key. */
export const ADVISORY_XACT_LOCK = namedStatement<{ key: number }>('select pg_advisory_xact_lock(:key)');

export const ACTIVE_USER_MANAGERS = namedStatement<Record<string, never>>(
  `select count(distinct u.id)::int as n
     from staff_users u join staff_user_roles ur on ur.staff_user_id = u.id join roles r on r.id = ur.role_id
    where u.is_active and 'manage_users' = any(r.permissions)`,
);

/** The settings row with the defaults, unless it exists. */
export const INSERT_DEFAULT_SETTINGS = namedStatement<{ access_token_ttl_seconds: number }>(
  `insert into broker_settings (id, access_token_ttl_seconds, updated_at) values (1, :access_token_ttl_seconds, now())
   on conflict (id) do nothing`,
);

/** A password-reset token is consumed by one conditional update, so it works once. */
export const CONSUME_RESET_TOKEN = namedStatement<{ token_hash: string }>(
  `update password_reset_tokens set used_at = now(), updated_at = now()
    where token_hash = :token_hash and used_at is null and expires_at > now() returning id`,
);

/** Every other open token of the customer dies with the one used. */
export const CLOSE_RESET_TOKENS = namedStatement<{ customer_id: string }>(
  'update password_reset_tokens set used_at = now(), updated_at = now() where customer_id = :customer_id and used_at is null',
);

/**
 * A staff user's data scope and, for `team`, the teams it sees: those it belongs to, and
 * every team below one it leads (teams nest without limit; `union` ends a cycle).
 */
export const STAFF_DATA_SCOPE = namedStatement<{ user_id: string }>(
  `with recursive led(id) as (
     select team_id from team_members where user_id = :user_id::uuid and role = 'lead'
     union select t.id from teams t join led on t.parent_team_id = led.id)
   select s.data_scope as "dataScope",
     case when s.data_scope = 'team' then array(
       select team_id::text from team_members where user_id = :user_id::uuid union select id::text from led)
     else '{}'::text[] end as "teamIds"
   from staff_users s where s.id = :user_id::uuid`,
);

/** The teams of some staff users, one row per user with any. */
export const TEAM_IDS_OF = namedStatement<{ user_ids: string }>(
  `select user_id::text as user_id, array_agg(team_id::text order by team_id) as team_ids
     from team_members where user_id = any(:user_ids::uuid[]) group by user_id`,
);
