import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The stored functions whose current body lives in this folder, one `<name>.sql` each. */
export const SQL_FUNCTIONS = [
  'ledger_entries_append_only',
  'user_permissions',
  'open_session',
  'webhook_attempts_record',
  'webhook_delivery_steps',
  'domain_events_notify',
] as const;
export type SqlFunctionName = (typeof SQL_FUNCTIONS)[number];

/**
 * The `CREATE OR REPLACE FUNCTION` statement of one stored function, read from its file.
 *
 * The newest migration that creates a function loads it from here; an older migration that
 * created an earlier version keeps that version's text inline, so it still produces what it
 * produced when it ran (and a `down` can go back to it). Changing a body means: the migration
 * that loaded the file gets the old text inline, and a new migration loads the file.
 * The files are written in `pg_get_functiondef`'s own form, so a test can compare them with
 * the migrated database. The build copies them next to the compiled loader.
 */
export function sqlFunction(name: SqlFunctionName): string {
  return readFileSync(join(__dirname, `${name}.sql`), 'utf8');
}
