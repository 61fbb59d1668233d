import { z } from 'zod';
import { CalendarDate } from '../../platform/calendar-date';

/** `HH:MM`, 00:00 to 23:59, UTC. */
export const RolloverTime = z
  .string()
  .regex(/^(?:[01]\d|2[0-3]):[0-5]\d$/, { message: 'A time of day HH:MM (UTC), 00:00 to 23:59' })
  .describe('When the end of day runs, HH:MM in UTC');

export const SWAP_WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'] as const;
export type SwapWeekday = (typeof SWAP_WEEKDAYS)[number];
export const TripleSwapDay = z.enum(SWAP_WEEKDAYS).describe('The weekday whose rollover books three nights');

/** A calendar date `YYYY-MM-DD` that exists (2026-02-30 does not). */
export const TradingDate = CalendarDate.describe('A trading date, YYYY-MM-DD');

export interface RolloverSettings {
  rolloverTime: string;
  tripleSwapDay: string;
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;

function minutesOf(time: string): number {
  const [h, m] = time.split(':').map(Number);
  return h! * 60 + m!;
}

/** The instant the rollover of `date` starts: that date at rollover_time, UTC. */
export function rolloverInstant(date: string, rolloverTime: string): Date {
  return new Date(Date.parse(`${date}T00:00:00.000Z`) + minutesOf(rolloverTime) * 60_000);
}

/** The UTC date of an instant, `YYYY-MM-DD`. */
export function utcDate(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/**
 * The trading date a rollover firing at `at` closes: the UTC date of the moment it was due.
 * A scheduled run starts a little after its time, never a day late, so the date is that of the
 * instant itself (a rollover at 00:00 closes the day that begins then: set it earlier).
 */
export function tradingDateAt(at: Date): string {
  return utcDate(at);
}

/** The trading date an instant falls in: up to the rollover of its UTC date, else the next date. */
export function tradingDateOf(at: Date, rolloverTime: string): string {
  const date = utcDate(at);
  if (at.getTime() < rolloverInstant(date, rolloverTime).getTime()) return date;
  return addDays(date, 1);
}

export function addDays(date: string, days: number): string {
  return utcDate(new Date(Date.parse(`${date}T00:00:00.000Z`) + days * 86_400_000));
}

function daysBetween(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000);
}

/** Nights of swap the rollover of `date` books: 3 on the triple day, 0 at weekends, else 1. */
export function swapNights(date: string, tripleSwapDay: string): number {
  const weekday = WEEKDAYS[new Date(`${date}T00:00:00Z`).getUTCDay()]!;
  if (weekday === 'saturday' || weekday === 'sunday') return 0;
  return weekday === tripleSwapDay ? 3 : 1;
}

/**
 * How many nights an order opened at `openedAt` has been held once the rollover of `date` is
 * done, this night included: 1 for an order opened during that trading date, and one more for
 * each calendar day before it (weekend nights count: the position was held).
 */
export function nightsHeld(openedAt: Date, date: string, rolloverTime: string): number {
  return daysBetween(tradingDateOf(openedAt, rolloverTime), date) + 1;
}

/**
 * Whether a swap-free term waives this night: with `swap_free` or `is_islamic` an order books
 * no swap until it has been held `swap_free_days` nights (0: never). The first
 * `swap_free_days` nights are free; from the next one on the order pays like any other.
 */
export function swapWaived(terms: { swapFree: boolean; isIslamic: boolean; swapFreeDays: number }, held: number): boolean {
  if (!terms.swapFree && !terms.isIslamic) return false;
  if (terms.swapFreeDays === 0) return true;
  return held <= terms.swapFreeDays;
}

/** BullMQ's cron pattern for a daily rollover at `HH:MM` (seconds first, as BullMQ's cron parser reads six fields). */
export function rolloverPattern(rolloverTime: string): string {
  const [h, m] = rolloverTime.split(':').map(Number);
  return `0 ${m} ${h} * * *`;
}
