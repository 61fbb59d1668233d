import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../entities/account.entity';
import { Order } from '../../entities/order.entity';
import { dec } from '../../platform/decimal';
import { metricsOf } from '../accounts/account-metrics';
import { PricingContext, type PricingTerms } from '../prices/pricing-context';
import type { QuoteStore } from '../prices/quote-store';

/**
 * What `account.updated` carries: the money figures of the account view (GET
 * /customers/me/accounts), with the same JSON types: decimal text with two decimals, so a
 * client reads a balance one way whichever way it arrives.
 */
export interface AccountFigures {
  login: number;
  balance: string;
  credit: string;
  equity: string;
  margin: string;
  free_margin: string;
}

/**
 * An account as a customer stream watches it: the account, its open positions and their
 * pricing terms, read from Postgres when one of the customer's events arrives, and priced
 * again at the current quotes whenever a quote of one of its symbols moves (Redis only).
 */
export interface WatchedAccount {
  account: Account;
  open: Order[];
  symbols: string[];
  terms?: PricingTerms;
}

export async function loadWatchedAccounts(em: EntityManager, customerId: string): Promise<WatchedAccount[]> {
  const accounts = await em.find(Account, { customer: customerId }, { populate: ['group'], orderBy: { login: 'asc' } });
  const open = accounts.length ? await em.find(Order, { account: { $in: accounts.map((a) => a.id) }, status: 'open' }) : [];
  const watched: WatchedAccount[] = [];
  for (const account of accounts) {
    const mine = open.filter((o) => o.account.id === account.id);
    const symbols = [...new Set(mine.map((o) => o.symbol))];
    const terms = symbols.length ? await PricingContext.loadTerms(em, account, symbols) : undefined;
    watched.push({ account, open: mine, symbols, terms });
  }
  return watched;
}

export async function figuresOf(em: EntityManager, quotes: QuoteStore, w: WatchedAccount): Promise<AccountFigures> {
  const login = Number(w.account.login);
  if (w.open.length === 0) {
    const balance = dec(w.account.balance);
    const equity = balance.plus(dec(w.account.credit)).toFixed(2);
    return {
      login,
      balance: balance.toFixed(2),
      credit: dec(w.account.credit).toFixed(2),
      equity,
      margin: '0.00',
      free_margin: equity,
    };
  }
  const pricing = await PricingContext.load(em, quotes, w.account, w.symbols, w.terms);
  const m = metricsOf(w.account, w.open, pricing);
  return {
    login,
    balance: m.balance.toFixed(2),
    credit: m.credit.toFixed(2),
    equity: m.equity.toFixed(2),
    margin: m.margin.toFixed(2),
    free_margin: m.free_margin.toFixed(2),
  };
}
