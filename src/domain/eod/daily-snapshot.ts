import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Account } from '../../entities/account.entity';
import { AccountDailySnapshot } from '../../entities/account-daily-snapshot.entity';
import { MoneyText } from '../../platform/money-text';
import { leverageOf, metricsOf, type AccountMetrics, type OpenPosition } from '../accounts/account-metrics';
import { PricingContext } from '../prices/pricing-context';
import { PricingTermsCache } from '../prices/pricing-terms';
import { D, dec } from '../../platform/decimal';
import type { QuoteStore } from '../prices/quote-store';
import { CalendarDate } from '../../platform/calendar-date';

/** An account at the end of a trading date. */
export const DailySnapshotSchema = z.object({
  login: z.int(),
  trading_date: CalendarDate,
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
 * Pricing terms shared by the accounts of one chunk (and its one-by-one retry), which differ
 * only by currency, group and symbols held: a chunk makes its own cache and drops it when
 * done, so the TTL only bounds a chunk that runs unusually long.
 */
export function chunkTermsCache(): PricingTermsCache {
  return new PricingTermsCache(10 * 60_000);
}

/**
 * The prices of one chunk's snapshots: one PricingContext per (currency, group, symbols held),
 * so the quotes are read once per such key for the whole chunk rather than once per account,
 * and every account of the chunk holding the same symbols is valued at the same quotes.
 */
export class ChunkPricing {
  private readonly contexts = new Map<string, Promise<PricingContext>>();

  constructor(
    private readonly em: EntityManager,
    private readonly quotes: QuoteStore,
    private readonly terms: PricingTermsCache,
  ) {}

  of(account: Account, symbols: readonly string[]): Promise<PricingContext> {
    const sorted = [...new Set(symbols)].sort();
    const groupId = account.group?.id ?? null;
    const key = `${account.currency}|${groupId ?? ''}|${sorted.join(',')}`;
    let context = this.contexts.get(key);
    if (!context) {
      context = this.terms
        .get(this.em, { currency: account.currency, groupId }, sorted)
        .then((terms) => PricingContext.priced(this.quotes, account.currency, sorted, terms));
      this.contexts.set(key, context);
    }
    return context;
  }
}

/** An account's figures at the end of the day, as money text. */
export interface SnapshotFigures {
  balance: string;
  equity: string;
  margin: string;
  free_margin: string;
  floating_profit: string;
}

/**
 * Balance, equity (credit included), margin, free margin and floating profit from the account metrics
 * (metricsOf) at the chunk's quotes. `balance` is the balance after the swaps: the entity keeps
 * the one it was loaded with, as the swaps changed the row by SQL.
 */
export async function snapshotFigures(
  pricing: ChunkPricing,
  account: Account,
  balance: string,
  open: readonly OpenPosition[],
): Promise<SnapshotFigures> {
  const priced = Object.assign(Object.create(account) as Account, { balance });
  let metrics: AccountMetrics;
  if (open.length === 0) {
    const b = dec(balance);
    const credit = dec(account.credit);
    metrics = { balance: b, credit, equity: b.plus(credit), margin: new D(0), free_margin: b.plus(credit) };
  } else {
    const context = await pricing.of(
      account,
      open.map((o) => o.symbol),
    );
    metrics = metricsOf(priced, [...open], context, leverageOf(account));
  }
  return {
    balance: metrics.balance.toFixed(2),
    equity: metrics.equity.toFixed(2),
    margin: metrics.margin.toFixed(2),
    free_margin: metrics.free_margin.toFixed(2),
    floating_profit: metrics.equity.minus(metrics.balance).minus(metrics.credit).toFixed(2),
  };
}
