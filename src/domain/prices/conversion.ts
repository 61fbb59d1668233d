import type { EntityManager } from '@mikro-orm/postgresql';
import { Instrument } from '../../entities/instrument.entity';
import { D, dec, type Dec } from '../../platform/decimal';
import type { QuoteStore } from './quote-store';

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
 * Converts between currencies with the latest quotes (decisions, section 4): the symbol
 * joining the two currencies, direct (FROMTO) or inverted (TOFROM), else crossed through
 * USD. Conversions use the mid price. Undefined when no path has a quote.
 */
export class CurrencyConverter {
  private constructor(private readonly legs: Map<string, Leg>) {}

  /** The instruments that join any two of the currencies (or USD): what conversion may need. */
  static async joiningInstruments(em: EntityManager, currencies: string[]): Promise<Instrument[]> {
    const wanted = [...new Set([...currencies, 'USD'])];
    const instruments = await em.find(Instrument, {
      $or: [{ baseCurrency: { $in: wanted } }, { quoteCurrency: { $in: wanted } }],
    });
    return instruments.filter((i) => wanted.includes(i.baseCurrency) && wanted.includes(i.quoteCurrency));
  }

  /** A converter at the latest quotes of those instruments. */
  static async priced(joining: Instrument[], quotes: QuoteStore): Promise<CurrencyConverter> {
    const prices = await quotes.getMany(joining.map((i) => i.symbol));
    const legs = new Map<string, Leg>();
    for (const i of joining) {
      const q = prices.get(i.symbol);
      if (!q) continue;
      const mid = dec(q.bid).plus(dec(q.ask)).div(2);
      legs.set(`${i.baseCurrency}>${i.quoteCurrency}`, { rate: mid, symbol: i.symbol });
      if (!legs.has(`${i.quoteCurrency}>${i.baseCurrency}`))
        legs.set(`${i.quoteCurrency}>${i.baseCurrency}`, { rate: new D(1).div(mid), symbol: i.symbol });
    }
    return new CurrencyConverter(legs);
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
}
