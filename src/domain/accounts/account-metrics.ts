import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../../entities/account.entity';
import { Order } from '../../entities/order.entity';
import { D, dec, money, type Dec } from '../../platform/decimal';
import type { QuoteStore } from '../prices/quote-store';
import { PricingContext, PricingError } from '../prices/pricing-context';
import { closingPrice, marginInQuoteCurrency, profitInQuoteCurrency } from '../prices/trading-math';

/** What leverageOf reads of an account: its own leverage and its group, when it has them. */
type LeverageOf = Partial<Pick<Account, 'leverage' | 'group'>>;

/** The leverage an account trades at: its own, else its group's default. */
export function leverageOf(account: LeverageOf): number {
  return account.leverage ?? account.group?.getEntity().defaultLeverage ?? 1;
}

/** What the margin of an open position depends on. */
export type OpenPosition = Pick<Order, 'symbol' | 'cmd' | 'volume' | 'contractSize' | 'openPrice'>;

export interface AccountMetrics {
  balance: Dec;
  /** The non-withdrawable bucket: part of equity, never of what can leave the account. */
  credit: Dec;
  equity: Dec;
  margin: Dec;
  free_margin: Dec;
}

/**
 * Equity (balance plus credit plus floating profit) and margin of an account's open orders at
 * current quotes, in the account currency. Credit counts in equity everywhere equity is used
 * (margin level, margin call, stop-out, free margin, prop rules). An order whose symbol has no
 * quote counts at its opening price with no floating profit.
 */
export function metricsOf(
  account: Pick<Account, 'balance' | 'currency'> & Partial<Pick<Account, 'credit'>> & LeverageOf,
  open: OpenPosition[],
  pricing: PricingContext,
  leverage: number = leverageOf(account),
): AccountMetrics {
  let floating = new D(0);
  let margin = new D(0);
  for (const o of open) {
    const volume = dec(o.volume);
    const contract = dec(o.contractSize);
    const quoteCurrency = pricing.instrument(o.symbol)?.quoteCurrency;
    let current: Dec = dec(o.openPrice);
    let profit = new D(0);
    try {
      const q = pricing.quote(o.symbol);
      current = closingPrice(o.cmd, q);
      profit = profitInQuoteCurrency(o.cmd, dec(o.openPrice), current, volume, contract);
    } catch (err) {
      if (!(err instanceof PricingError)) throw err;
    }
    if (!quoteCurrency) continue;
    let rate: Dec;
    try {
      rate = pricing.toAccountCurrency(new D(1), quoteCurrency);
    } catch (err) {
      if (!(err instanceof PricingError)) throw err;
      // Without its quote, a symbol whose base is the account currency (USDJPY on a USD
      // account) has no conversion either. Its own price is that rate: without this
      // fallback its margin counted as 0 and the free-margin check let new orders past it.
      if (pricing.instrument(o.symbol)?.baseCurrency !== account.currency) continue;
      rate = new D(1).div(current);
    }
    floating = floating.plus(profit.times(rate));
    margin = margin.plus(marginInQuoteCurrency(volume, contract, current, leverage).times(rate));
  }
  const balance = dec(account.balance);
  const credit = dec(account.credit ?? '0');
  const equity = money(balance.plus(credit).plus(floating));
  const usedMargin = money(margin);
  return { balance, credit, equity, margin: usedMargin, free_margin: equity.minus(usedMargin) };
}

export async function loadMetrics(em: EntityManager, quotes: QuoteStore, account: Account): Promise<AccountMetrics> {
  const open = await em.find(Order, { account: account.id, status: 'open' });
  // Most accounts (every wallet) hold no position: nothing to price.
  if (open.length === 0) {
    const balance = dec(account.balance);
    const credit = dec(account.credit);
    const equity = balance.plus(credit);
    return { balance, credit, equity, margin: new D(0), free_margin: equity };
  }
  const pricing = await PricingContext.load(
    em,
    quotes,
    account,
    open.map((o) => o.symbol),
  );
  return metricsOf(account, open, pricing);
}
