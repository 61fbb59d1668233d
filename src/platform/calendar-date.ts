import { z } from 'zod';

/**
 * A calendar date, `YYYY-MM-DD`, of the years this service can hold. ISO 8601 allows year
 * 0000, which Postgres's `date` refuses (it has no year 0), so an unbounded date would reach
 * the database and fail there; nothing a broker books predates 1970.
 */
export const CalendarDate = z.iso
  .date()
  .refine((value) => value >= '1970-01-01', { message: 'Date must be on or after 1970-01-01' });
