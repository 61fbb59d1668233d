import { namedStatement } from '../../platform/named-sql';

/**
 * The hand-written statements of group administration, with named parameters. A new group
 * and its audit row are written by one generated statement (group-terms.ts).
 */

/** Serialises the changes that make a group the default, so two cannot both succeed. */
export const LOCK_DEFAULT_GROUP = namedStatement<{ key: number }>('select pg_advisory_xact_lock(:key)');

/** The lower-cased names that start with a prefix (LIKE-escaped with backslash), for a clone's free name. */
export const NAMES_WITH_PREFIX = namedStatement<{ pattern: string }>(
  "select lower(name) as name from trading_groups where lower(name) like lower(:pattern) escape '\\'",
);

/** A clone's per-instrument terms, copied from its source in one statement. */
export const COPY_GROUP_INSTRUMENTS = namedStatement<{ copy_id: string; source_id: string }>(
  `insert into group_instruments (group_id, instrument_id, enabled, spread, commission_value, swap_long, swap_short, created_at, updated_at)
   select :copy_id, instrument_id, enabled, spread, commission_value, swap_long, swap_short, now(), now()
     from group_instruments where group_id = :source_id`,
);
