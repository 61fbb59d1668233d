import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../../entities/account.entity';
import { dec, type Dec } from '../../platform/decimal';
import { commissionOf, type CommissionTerms } from './commission';
import { CurrencyConverter } from './conversion';
import { readPricingTerms, type GroupRowTerms, type PricedInstrument, type PricingTerms } from './pricing-terms';
import type { QuoteStore } from './quote-store';
import { withSpread } from './trading-math';

export interface TradableQuote {
  instrument: PricedInstrument;
  bid: Dec;
  ask: Dec;
}

export type { PricingTerms };

/** Why a symbol cannot be priced for an account; the order routes turn it into a 422. */
export class PricingError extends Error {}

/**
 * Everything needed to price an account's orders at current quotes: its instruments, its
 * group's rows (spread, enabled), the quotes, and currency conversion into the account's
 * currency. Loaded once per operation.
 */
export class PricingContext {
  private constructor(
    /** The account currency, which amounts convert into. */
    private readonly currency: string,
    private readonly instruments: Map<string, PricedInstrument>,
    private readonly rows: Map<string, GroupRowTerms>,
    private readonly quotes: Map<string, { bid: string; ask: string; symbol: string; updated_at: string }>,
    private readonly converter: CurrencyConverter,
    private readonly commissionTerms: CommissionTerms,
  ) {}

  /**
   * Prices `symbols` for `account` at the latest quotes. `terms` are the account's slowly
   * changing pricing inputs (loadTerms); a caller pricing many orders of one account, like
   * a bulk close, loads them once and passes them in. Quotes are always read afresh.
   */
  static async load(
    em: EntityManager,
    store: QuoteStore,
    account: Account,
    symbols: string[],
    terms?: PricingTerms,
  ): Promise<PricingContext> {
    return PricingContext.priced(
      store,
      account.currency,
      symbols,
      terms ?? (await PricingContext.loadTerms(em, account, symbols)),
    );
  }

  /**
   * Prices `symbols` in `currency` (an account's) with terms already read, at the latest
   * quotes: what `load` does once it has the terms, for a caller that read them itself in a
   * wider statement and holds no entity of the account (opening an order).
   */
  static async priced(store: QuoteStore, currency: string, symbols: string[], terms: PricingTerms): Promise<PricingContext> {
    const [quotes, converter] = await Promise.all([
      store.getMany([...new Set(symbols)]),
      CurrencyConverter.priced(terms.joining, store),
    ]);
    return new PricingContext(
      currency,
      new Map(terms.instruments.map((i) => [i.symbol, i])),
      new Map(terms.rows.map((r) => [r.symbol, r])),
      quotes,
      converter,
      terms.commission,
    );
  }

  /** The instruments, the group's rows for them, and the instruments that convert into the account currency. */
  static loadTerms(em: EntityManager, account: Account, symbols: string[]): Promise<PricingTerms> {
    return readPricingTerms(em, { currency: account.currency, groupId: account.group?.id ?? null }, symbols);
  }

  /**
   * Prices `symbol` and every symbol the account holds open, with one read of the terms: what
   * a pending order's decision loads, so its fill's free-margin check can reuse it.
   */
  static async loadWithHoldings(em: EntityManager, store: QuoteStore, account: Account, symbol: string): Promise<PricingContext> {
    const terms = await readPricingTerms(
      em,
      { currency: account.currency, groupId: account.group?.id ?? null, holdingsOf: account.id },
      [symbol],
    );
    return PricingContext.load(em, store, account, [symbol, ...terms.instruments.map((i) => i.symbol)], terms);
  }

  /** Whether this pricing was loaded for every one of `symbols` (a fill reuses it only then). */
  covers(symbols: string[]): boolean {
    return symbols.every((s) => this.instruments.has(s));
  }

  instrument(symbol: string): PricedInstrument | undefined {
    return this.instruments.get(symbol);
  }

  /**
   * The account's quote for a symbol, with its group's spread. A group trades every
   * instrument unless it has a row for it that is disabled.
   */
  quote(symbol: string): TradableQuote {
    const instrument = this.instruments.get(symbol);
    if (!instrument) throw new PricingError(`Unknown instrument ${symbol}`);
    const row = this.rows.get(symbol);
    if (row && !row.enabled) throw new PricingError(`${symbol} is not tradable in this account's group`);
    const raw = this.quotes.get(symbol);
    if (!raw) throw new PricingError(`No quote for ${symbol}`);
    const priced = withSpread(raw, dec(row?.spread ?? 0), instrument.digits);
    if (priced.bid.lte(0)) throw new PricingError(`The group's spread leaves ${symbol} without a positive bid`);
    return { instrument, ...priced };
  }

  /** The account's quote for a symbol, or null where `quote` would say why it has none. */
  quoteOrNull(symbol: string): TradableQuote | null {
    try {
      return this.quote(symbol);
    } catch (err) {
      if (err instanceof PricingError) return null;
      throw err;
    }
  }

  /**
   * The commission of one side of a deal in `symbol` at `price`, a positive
   * amount in the account currency: the group's terms, with the group row's value overriding
   * the group's for that symbol. Throws PricingError when a percent commission cannot be
   * converted into the account currency.
   */
  commission(symbol: string, volume: Dec, price: Dec): Dec {
    const instrument = this.instruments.get(symbol);
    if (!instrument) throw new PricingError(`Unknown instrument ${symbol}`);
    return commissionOf(
      this.commissionTerms,
      this.rows.get(symbol)?.commissionValue,
      { volume, contractSize: dec(instrument.contractSize), price },
      (amount) => this.toAccountCurrency(amount, instrument.quoteCurrency),
    );
  }

  /** Converts an amount in the instrument's quote currency into the account currency. */
  toAccountCurrency(amount: Dec, fromCurrency: string): Dec {
    const rate = this.converter.rate(fromCurrency, this.currency);
    if (!rate) throw new PricingError(`No quote to convert ${fromCurrency} into ${this.currency}`);
    return amount.times(rate.rate);
  }
}
