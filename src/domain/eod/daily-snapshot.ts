import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Account } from '../../entities/account.entity';
import { AccountDailySnapshot } from '../../entities/account-daily-snapshot.entity';
import { Order } from '../../entities/order.entity';
import { executeNamed } from '../../db/bound-statement';
import { MoneyText } from '../money/primitives/money-text';
import { loadMetrics } from '../accounts/account-metrics';
import type { QuoteStore } from '../prices/quote-store';
import { INSERT_SNAPSHOT, MOVEMENTS_SINCE_PREVIOUS } from './eod.queries';

/** An account at the end of a trading date (decisions, section 13). */
export const DailySnapshotSchema = z.object({
  login: z.int(),
  trading_date: z.iso.date(),
  balance: MoneyText,
  equity: MoneyText,
  margin: MoneyText,
  free_margin: MoneyText,
  floating_profit: MoneyText,
  movements: z
    .record(z.string(), MoneyText)
    .describe("Sums per ledger kind of the account's rows booked since its previous snapshot (signed as they hit the balance)"),
});
export type DailySnapshotView = z.output<typeof DailySnapshotSchema>;

export function dailySnapshotView(s: AccountDailySnapshot): DailySnapshotView {
  return {
    login: Number(s.login),
    trading_date: s.tradingDate,
    balance: s.balance,
    equity: s.equity,
    margin: s.margin,
    free_margin: s.freeMargin,
    floating_profit: s.floatingProfit,
    movements: s.movements,
  };
}

/**
 * Writes the account's snapshot of the date, in the caller's transaction after its swaps:
 * balance, equity, margin and free margin from the account metrics at current quotes, and the
 * ledger kinds' sums since the previous snapshot. Answers false when the date's snapshot was
 * already written (the key (account, date) keeps one).
 */
export async function writeDailySnapshot(
  em: EntityManager,
  quotes: QuoteStore,
  account: Account,
  tradingDate: string,
): Promise<boolean> {
  const metrics = await loadMetrics(em, quotes, account);
  const openOrders = await em.count(Order, { account: account.id, status: 'open' });
  const rows = await executeNamed<{ kind: string | null; amount: string | null; last_seq: string | null; prev_seq: string }>(
    em,
    MOVEMENTS_SINCE_PREVIOUS.bind({ account_id: account.id, trading_date: tradingDate }),
  );
  const movements: Record<string, string> = {};
  let lastSeq = BigInt(rows[0]?.prev_seq ?? '0');
  for (const r of rows) {
    if (r.kind === null) continue;
    movements[r.kind] = r.amount!;
    if (BigInt(r.last_seq!) > lastSeq) lastSeq = BigInt(r.last_seq!);
  }
  const written = await executeNamed<{ id: string }>(
    em,
    INSERT_SNAPSHOT.bind({
      account_id: account.id,
      login: account.login,
      trading_date: tradingDate,
      balance: metrics.balance.toFixed(2),
      equity: metrics.equity.toFixed(2),
      margin: metrics.margin.toFixed(2),
      free_margin: metrics.free_margin.toFixed(2),
      floating_profit: metrics.equity.minus(metrics.balance).toFixed(2),
      movements: JSON.stringify(movements),
      ledger_seq: lastSeq.toString(),
      open_orders: openOrders,
    }),
  );
  return written.length === 1;
}
