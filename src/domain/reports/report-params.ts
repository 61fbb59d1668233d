import { z } from 'zod';
import type { ReportType } from '../../entities/report.entity';
import { CurrencyCode } from '../../platform/money-text';
import { CalendarDate } from '../../platform/calendar-date';

/** The longest period one statement covers. */
export const MAX_STATEMENT_DAYS = 366;

const DAY_MS = 86_400_000;

const Day = CalendarDate.describe('A date, `YYYY-MM-DD` (UTC days)');
const Login = z.int().min(1).describe('The account login');

/** `from` and `to`, both inclusive: `from` may not be after `to`; `maxDays` bounds the span. */
function period<S extends z.ZodRawShape>(shape: S, maxDays?: number) {
  return z.object({ from: Day, to: Day, ...shape }).superRefine((value, ctx) => {
    const { from: first, to: last } = value as { from: string; to: string };
    const from = Date.parse(first);
    const to = Date.parse(last);
    if (from > to) ctx.addIssue({ code: 'custom', path: ['from'], message: 'from must not be after to' });
    else if (maxDays !== undefined && (to - from) / DAY_MS + 1 > maxDays)
      ctx.addIssue({ code: 'custom', path: ['to'], message: `The period may span at most ${maxDays} days` });
  });
}

export const StatementParamsSchema = period({ login: Login }, MAX_STATEMENT_DAYS);
export const TradesParamsSchema = period({
  login: Login.optional(),
  symbol: z.string().min(1).max(32).optional(),
});
export const ExposureParamsSchema = z.object({
  group_id: z.uuid().optional().describe('Only the open orders of accounts in this group'),
  currency: CurrencyCode.default('USD').describe('The currency notional and floating profit are shown in'),
});
export const DepositsWithdrawalsParamsSchema = period({ group_id: z.uuid().optional() });
export const DailyParamsSchema = z.object({ trading_date: Day });
export const PromotionsParamsSchema = period({ campaign_id: z.uuid().optional() });
export const PartnerReportParamsSchema = period({
  partner_id: z.uuid().optional().describe('One partner (its levels below included); every partner when absent'),
});

export const REPORT_PARAMS = {
  account_statement: StatementParamsSchema,
  trades: TradesParamsSchema,
  exposure: ExposureParamsSchema,
  deposits_withdrawals: DepositsWithdrawalsParamsSchema,
  daily: DailyParamsSchema,
  promotions: PromotionsParamsSchema,
  ib_rewards: PartnerReportParamsSchema,
  ib_acquisition: PartnerReportParamsSchema,
} satisfies Record<ReportType, z.ZodType>;

export type StatementParams = z.output<typeof StatementParamsSchema>;
export type TradesParams = z.output<typeof TradesParamsSchema>;
export type ExposureParams = z.output<typeof ExposureParamsSchema>;
export type DepositsWithdrawalsParams = z.output<typeof DepositsWithdrawalsParamsSchema>;
export type DailyParams = z.output<typeof DailyParamsSchema>;
export type PromotionsParams = z.output<typeof PromotionsParamsSchema>;
export type PartnerReportParams = z.output<typeof PartnerReportParamsSchema>;

/** The first instant of a `YYYY-MM-DD` day (UTC), and the first instant after an inclusive `to`. */
export function dayStart(day: string): Date {
  return new Date(`${day}T00:00:00.000Z`);
}

export function dayAfter(day: string): Date {
  return new Date(dayStart(day).getTime() + DAY_MS);
}
