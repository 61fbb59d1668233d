import { scopeParams } from '../../platform/customer-scope';
import type { Column, ReportDocument } from './report-document';
import type { DailyParams } from './report-params';
import type { SourceContext } from './source-context';
import { DAILY_SNAPSHOTS } from './reports.queries';

export const DAILY_COLUMNS: Column[] = [
  { key: 'login', label: 'Login', type: 'integer' },
  { key: 'trading_date', label: 'Trading date', type: 'date' },
  { key: 'currency', label: 'Currency', type: 'text' },
  { key: 'balance', label: 'Balance', type: 'money' },
  { key: 'equity', label: 'Equity', type: 'money' },
  { key: 'margin', label: 'Margin', type: 'money' },
  { key: 'free_margin', label: 'Free margin', type: 'money' },
  { key: 'floating_profit', label: 'Floating profit', type: 'money' },
  { key: 'movements', label: 'Movements', type: 'json' },
];

/**
 * Every trading account's snapshot of one trading date, as the end of day wrote it
 * (account_daily_snapshots: one row per account and date). A date the end of day has not
 * run for yields an empty report, not an error: the run may simply not have happened yet.
 */
export async function dailyDocument(params: DailyParams, ctx: SourceContext): Promise<ReportDocument> {
  const bound = DAILY_SNAPSHOTS.bind({ trading_date: params.trading_date, ...scopeParams(ctx.scope) });
  return {
    fileName: `daily-${params.trading_date}`,
    title: 'Daily snapshots',
    subtitle: [`Every account's snapshot of trading date ${params.trading_date}.`, `Built ${ctx.now.toISOString()} (UTC).`],
    head: { type: 'daily', trading_date: params.trading_date },
    headTypes: { type: 'text', trading_date: 'date' },
    summary: [],
    sections: [{ key: 'snapshots', title: 'Snapshots', columns: DAILY_COLUMNS, rows: () => ctx.reader.stream(bound) }],
  };
}
