import { z } from 'zod';

const EARLIEST = Date.parse('2000-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:59:59Z');

/** An ISO 8601 UTC time a promotion can start, end or expire at: years 2000 to 9999, which Postgres stores. */
export const Moment = z.iso.datetime().refine((s) => {
  const t = Date.parse(s);
  return t >= EARLIEST && t <= LATEST;
}, 'A time between the years 2000 and 9999');
