import { Migration } from '@mikro-orm/migrations';
import { sqlFunction } from '../functions/sql-function';

/**
 * A login's session statement as functions, so Postgres plans it once per connection.
 *
 * `open_session` writes the session row and its first refresh token and answers the
 * access-token lifetime and, for staff, the permissions the session cache starts with: what
 * the login sent as one CTE, which Postgres parsed and planned again on every login, a large
 * share of its work for the statement. A PL/pgSQL function keeps the plans of its statements for the life of the
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
    this.addSql(sqlFunction('user_permissions'));
    this.addSql(sqlFunction('open_session'));
  }

  override async down(): Promise<void> {
    this.addSql('drop function if exists open_session(uuid, timestamptz, text, uuid, text, text, timestamptz, uuid, text);');
    this.addSql('drop function if exists user_permissions(uuid);');
  }
}
