import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../../entities/account.entity';
import { GroupInstrument } from '../../entities/group-instrument.entity';
import { Instrument } from '../../entities/instrument.entity';
import { dec, type Dec } from '../../platform/decimal';
import { CurrencyConverter } from '../prices/conversion';
import type { QuoteStore } from '../prices/quote-store';
import { withSpread } from './trading-math';

export interface TradableQuote {
  instrument: Instrument;
  bid: Dec;
  ask: Dec;
}

/** Why a symbol cannot be priced for an account; the order routes turn it into a 422. */
export class PricingError extends Error {}

/**
 * Everything needed to price an account's orders at current quotes: its instruments, its
 * group's rows (spread, enabled), the quotes, and currency conversion into the account's
 * currency. Loaded once per operation.
 */
export class PricingContext {
  private constructor(
    private readonly account: Account,
    private readonly instruments: Map<string, Instrument>,
    private readonly rows: Map<string, GroupInstrument>,
    private readonly quotes: Map<string, { bid: string; ask: string; symbol: string; updated_at: string }>,
    private readonly converter: CurrencyConverter,
  ) {}

  static async load(em: EntityManager, store: QuoteStore, account: Account, symbols: string[]): Promise<PricingContext> {
    const unique = [...new Set(symbols)];
    const instruments = await em.find(Instrument, { symbol: { $in: unique } });
    const rows = account.group
      ? await em.find(
          GroupInstrument,
          { group: account.group.id, instrument: { $in: instruments.map((i) => i.id) } },
          { populate: ['instrument'] },
        )
      : [];
    const quotes = await store.getMany(unique);
    const currencies = [account.currency, ...instruments.map((i) => i.quoteCurrency)];
    const converter = await CurrencyConverter.load(em, store, currencies);
    return new PricingContext(
      account,
      new Map(instruments.map((i) => [i.symbol, i])),
      new Map(rows.map((r) => [r.instrument.getEntity().symbol, r])),
      quotes,
      converter,
    );
  }

  instrument(symbol: string): Instrument | undefined {
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
    return { instrument, ...priced };
  }

  /** Converts an amount in the instrument's quote currency into the account currency. */
  toAccountCurrency(amount: Dec, fromCurrency: string): Dec {
    const rate = this.converter.rate(fromCurrency, this.account.currency);
    if (!rate) throw new PricingError(`No quote to convert ${fromCurrency} into ${this.account.currency}`);
    return amount.times(rate.rate);
  }
}
