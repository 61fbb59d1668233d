import type { EntityManager } from '@mikro-orm/postgresql';
import type { Instrument } from '../../entities/instrument.entity';
import { executeNamed } from '../../db/bound-statement';
import type { RunBound } from '../../db/bound-transaction';
import { D, dec, exactProduct, moneyQuotientDown, type Dec } from '../../platform/decimal';
import { namedStatement } from '../../platform/named-sql';
import type { QuoteStore } from './quote-store';

/** What conversion reads of an instrument: the two currencies its quote joins. */
export type JoiningInstrument = Pick<Instrument, 'symbol' | 'baseCurrency' | 'quoteCurrency'>;

/** The instruments both of whose currencies are among `currencies` (a JSON array). */
const JOINING_INSTRUMENTS = namedStatement<{ currencies: string }>(`
select symbol, base_currency as "baseCurrency", quote_currency as "quoteCurrency" from instruments
 where base_currency in (select jsonb_array_elements_text(:currencies::jsonb))
   and quote_currency in (select jsonb_array_elements_text(:currencies::jsonb))`);

export interface Rate {
  /** Multiply an amount in `from` by this to get `to`. */
  rate: Dec;
  /** The symbol(s) used, or `identity`. */
  source: string;
}

interface Leg {
  rate: Dec;
  symbol: string;
}

/**
 * The side a dealer quotes a customer converting `from` into `to`:
 * converted = amount x multiplier / divisor, rounded down (toward zero) to 2 decimals once, at
 * the end.
 * Each leg multiplies by the bid of the symbol whose base is the currency given (XY: x bid) or
 * divides by the ask of the symbol whose base is the currency received (YX: / ask), so the
 * multiplier is the product of the bids used and the divisor the product of the asks used.
 * Kept as the two products, not as one rate: amount / ask is rarely a terminating decimal,
 * and the exact pair is what lets anyone recompute a booked conversion to the cent.
 */
export interface DealerRate {
  multiplier: Dec;
  divisor: Dec;
  /** The symbol(s) used, joined by a comma when crossed through USD, or `identity`. */
  source: string;
}

/** The rate between two amounts of one currency: no quote takes part. */
export const IDENTITY_RATE: DealerRate = Object.freeze({ multiplier: new D(1), divisor: new D(1), source: 'identity' });

interface Book {
  bid: Dec;
  ask: Dec;
  symbol: string;
}

/**
 * The one conversion of money between currencies (transfers, payouts): amount x multiplier /
 * divisor from its exact value, rounded toward zero to 2 decimals once. Never up: with bid
 * below ask each leg already loses the spread, and only rounding up could hand back more than
 * that (half-even turned 0.05 USD into 0.05 EUR and back into 0.06 USD), so no sequence of
 * conversions can create money.
 */
export function convertAtDealerRate(amount: Dec, rate: DealerRate): Dec {
  return moneyQuotientDown(exactProduct(amount, rate.multiplier), rate.divisor);
}

/**
 * Converts between currencies with the latest quotes: the symbol
 * joining the two currencies, direct (FROMTO) or inverted (TOFROM), else crossed through
 * USD. Two prices: `rate` at mid, what profits and margins convert at; `dealerRate` at the
 * side a dealer quotes the customer, what transfers convert at. Both take the same path.
 * Undefined when no path has a quote.
 */
export class CurrencyConverter {
  private constructor(
    private readonly legs: Map<string, Leg>,
    /** The raw quote of each instrument, by `BASE>QUOTE`. */
    private readonly books: Map<string, Book> = new Map(),
  ) {}

  /**
   * The instruments that join any two of the currencies (or USD): what conversion may need.
   * `run` sends the statement: on a bound transaction's connection, or through the ORM's.
   */
  static joiningInstruments(run: RunBound, currencies: string[]): Promise<JoiningInstrument[]> {
    return run<JoiningInstrument>(JOINING_INSTRUMENTS.bind({ currencies: JSON.stringify([...new Set([...currencies, 'USD'])]) }));
  }

  /** The dealer rate from one currency into another at the latest quotes; identity needs no quote. */
  static async dealerRateBetween(
    em: EntityManager,
    quotes: QuoteStore,
    from: string,
    to: string,
  ): Promise<DealerRate | undefined> {
    if (from === to) return IDENTITY_RATE;
    const joining = await CurrencyConverter.joiningInstruments((s) => executeNamed(em, s), [from, to]);
    const converter = await CurrencyConverter.priced(joining, quotes);
    return converter.dealerRate(from, to);
  }

  /** A converter at the latest quotes of those instruments. */
  static async priced(joining: readonly JoiningInstrument[], quotes: QuoteStore): Promise<CurrencyConverter> {
    const prices = await quotes.getMany(joining.map((i) => i.symbol));
    const legs = new Map<string, Leg>();
    const books = new Map<string, Book>();
    for (const i of joining) {
      const q = prices.get(i.symbol);
      if (!q) continue;
      books.set(`${i.baseCurrency}>${i.quoteCurrency}`, { bid: dec(q.bid), ask: dec(q.ask), symbol: i.symbol });
      const mid = dec(q.bid).plus(dec(q.ask)).div(2);
      legs.set(`${i.baseCurrency}>${i.quoteCurrency}`, { rate: mid, symbol: i.symbol });
      if (!legs.has(`${i.quoteCurrency}>${i.baseCurrency}`))
        legs.set(`${i.quoteCurrency}>${i.baseCurrency}`, { rate: new D(1).div(mid), symbol: i.symbol });
    }
    return new CurrencyConverter(legs, books);
  }

  rate(from: string, to: string): Rate | undefined {
    if (from === to) return { rate: new D(1), source: 'identity' };
    const direct = this.legs.get(`${from}>${to}`);
    if (direct) return { rate: direct.rate, source: direct.symbol };
    const first = this.legs.get(`${from}>USD`);
    const second = this.legs.get(`USD>${to}`);
    if (first && second) return { rate: first.rate.times(second.rate), source: `${first.symbol},${second.symbol}` };
    return undefined;
  }

  /**
   * The dealer side of the same path as `rate`: direct FROMTO at its bid, else inverted
   * TOFROM at its ask, else FROM into USD and USD into TO, each leg so.
   */
  dealerRate(from: string, to: string): DealerRate | undefined {
    if (from === to) return IDENTITY_RATE;
    const direct = this.dealerLeg(from, to);
    if (direct) return direct;
    const first = this.dealerLeg(from, 'USD');
    const second = this.dealerLeg('USD', to);
    if (!first || !second) return undefined;
    return {
      multiplier: exactProduct(first.multiplier, second.multiplier),
      divisor: exactProduct(first.divisor, second.divisor),
      source: `${first.source},${second.source}`,
    };
  }

  private dealerLeg(from: string, to: string): DealerRate | undefined {
    const direct = this.books.get(`${from}>${to}`);
    if (direct) return { multiplier: direct.bid, divisor: new D(1), source: direct.symbol };
    const inverted = this.books.get(`${to}>${from}`);
    if (inverted) return { multiplier: new D(1), divisor: inverted.ask, source: inverted.symbol };
    return undefined;
  }
}
