import { z } from 'zod';

/** Years 1 to 9999 in UTC: what a JS Date, its ISO text and a Postgres timestamptz all hold alike. */
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * An ISO 8601 date-time with `Z` or a `±hh:mm` offset, as an instant in years 1 to 9999 UTC.
 * The format alone takes year 0000, and an offset moves 0001-01-01 or 9999-12-31 past either
 * end (`0001-01-01T00:00:00+05:30` is in year 0); the ORM writes such a Date as `0000-…` or
 * `-000001-…` or `+010000-…`, which Postgres cannot read, so a filter or a stored expiry
 * failed as a 500. Refused here instead: 422 datetime_parsing at the field.
 */
export function isoInstant() {
  return z.iso.datetime({ offset: true }).refine(
    (v) => {
      const t = Date.parse(v);
      return t >= EARLIEST && t <= LATEST;
    },
    {
      message: 'Input should be a valid datetime, year out of range (0001 to 9999 in UTC)',
      params: { type: 'datetime_parsing' },
    },
  );
}
