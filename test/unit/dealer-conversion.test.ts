import Decimal from 'decimal.js';
import fc from 'fast-check';
import { convertAtDealerRate, CurrencyConverter } from '../../src/domain/prices/conversion';
import type { QuoteStore } from '../../src/domain/prices/quote-store';
import { Instrument } from '../../src/entities/instrument.entity';
import { dec, exactProduct, moneyQuotient } from '../../src/platform/decimal';

/** Quotes as the store holds them (decimal text), for the pure conversion arithmetic. */
function quotesOf(prices: Record<string, [string, string]>): QuoteStore {
  return {
    getMany: async (symbols: string[]) =>
      new Map(
        symbols
          .filter((s) => prices[s])
          .map((s) => [s, { symbol: s, bid: prices[s]![0], ask: prices[s]![1], updated_at: new Date(0).toISOString() }]),
      ),
  } as unknown as QuoteStore;
}

function instrument(symbol: string): Instrument {
  return Object.assign(new Instrument(), {
    symbol,
    baseCurrency: symbol.slice(0, 3),
    quoteCurrency: symbol.slice(3, 6),
    digits: 5,
    contractSize: '100000',
  });
}

async function converter(prices: Record<string, [string, string]>): Promise<CurrencyConverter> {
  return CurrencyConverter.priced(Object.keys(prices).map(instrument), quotesOf(prices));
}

const MARKET = {
  EURUSD: ['1.1', '1.1002'],
  USDJPY: ['150', '150.02'],
  GBPUSD: ['1.25', '1.2503'],
} as Record<string, [string, string]>;

/** An independent rounding: the quotient at 200 digits, rounded half-even (ties are checked separately). */
const Wide = Decimal.clone({ precision: 200, rounding: Decimal.ROUND_HALF_EVEN });
const wideCents = (n: Decimal.Value, d: Decimal.Value) => new Wide(n).div(d).toDecimalPlaces(2, Decimal.ROUND_HALF_EVEN);

describe('dealer-side conversion (decisions, section 4)', () => {
  test('when the currencies match, then the rate is identity and the amount is unchanged', async () => {
    const c = await converter(MARKET);
    const rate = c.dealerRate('USD', 'USD')!;
    expect(rate.source).toBe('identity');
    expect(convertAtDealerRate(dec('123.45'), rate).toFixed(2)).toBe('123.45');
  });

  test('when the symbol FROMTO is quoted, then the amount converts at its bid', async () => {
    const rate = (await converter(MARKET)).dealerRate('EUR', 'USD')!;
    expect(rate.source).toBe('EURUSD');
    expect(convertAtDealerRate(dec('100'), rate).toFixed(2)).toBe('110.00');
  });

  test('when only TOFROM is quoted, then the amount converts divided by its ask', async () => {
    const rate = (await converter(MARKET)).dealerRate('USD', 'EUR')!;
    expect(rate.source).toBe('EURUSD');
    // 100 / 1.1002 = 90.8925649...
    expect(convertAtDealerRate(dec('100'), rate).toFixed(2)).toBe('90.89');
  });

  test('when no symbol joins them, then each leg through USD converts on its own dealer side', async () => {
    const c = await converter(MARKET);
    // EUR -> USD at EURUSD bid, USD -> JPY at USDJPY bid
    const eurJpy = c.dealerRate('EUR', 'JPY')!;
    expect(eurJpy.source).toBe('EURUSD,USDJPY');
    expect(convertAtDealerRate(dec('10'), eurJpy).toFixed(2)).toBe('1650.00');
    // JPY -> USD / USDJPY ask, USD -> EUR / EURUSD ask: 10000 / 150.02 / 1.1002 = 60.5879...
    const jpyEur = c.dealerRate('JPY', 'EUR')!;
    expect(jpyEur.source).toBe('USDJPY,EURUSD');
    expect(convertAtDealerRate(dec('10000'), jpyEur).toFixed(2)).toBe(
      wideCents('10000', new Wide('150.02').times('1.1002')).toFixed(2),
    );
    // GBP -> USD x GBPUSD bid, USD -> EUR / EURUSD ask
    const gbpEur = c.dealerRate('GBP', 'EUR')!;
    expect(gbpEur.source).toBe('GBPUSD,EURUSD');
    expect(convertAtDealerRate(dec('100'), gbpEur).toFixed(2)).toBe('113.62'); // 125 / 1.1002 = 113.6157...
  });

  test('when a round trip converts there and back, then the customer never gains (bid below ask)', async () => {
    const c = await converter(MARKET);
    for (const [a, b] of [
      ['USD', 'EUR'],
      ['EUR', 'JPY'],
      ['GBP', 'JPY'],
    ] as const) {
      const there = convertAtDealerRate(dec('1000'), c.dealerRate(a, b)!);
      const back = convertAtDealerRate(there, c.dealerRate(b, a)!);
      expect(back.lte(1000)).toBe(true);
    }
  });

  test('when a quote is missing on the path, then there is no rate', async () => {
    const c = await converter({ EURUSD: ['1.1', '1.1002'] });
    expect(c.dealerRate('EUR', 'JPY')).toBeUndefined();
    expect(c.dealerRate('CHF', 'USD')).toBeUndefined();
    expect(c.dealerRate('EUR', 'USD')).toBeDefined();
  });

  test('when the dealer path is added, then the mid path used for profits is unchanged', async () => {
    const c = await converter(MARKET);
    expect(c.rate('EUR', 'USD')!.rate.toFixed()).toBe('1.1001');
    expect(c.rate('EUR', 'JPY')!.source).toBe('EURUSD,USDJPY');
    expect(c.rate('EUR', 'JPY')!.rate.toFixed(6)).toBe(new Decimal('1.1001').times('150.01').toFixed(6));
  });
});

describe('one half-even rounding from the exact quotient', () => {
  test.each([
    ['0.03', '6', '0.00'], // 0.005: a tie, to the even cent
    ['0.09', '6', '0.02'], // 0.015: a tie, to the even cent
    ['1', '8', '0.12'], // 0.125
    ['3', '8', '0.38'], // 0.375
    ['-1', '8', '-0.12'],
    ['2', '3', '0.67'],
    ['1000000000000', '0.000001', '1000000000000000000.00'],
  ])('when %s / %s, then %s', (n, d, expected) => {
    expect(moneyQuotient(n, d).toFixed(2)).toBe(expected);
  });

  test('when a quotient does not terminate, then rounding does not go through a 40-digit approximation', () => {
    // 0.03 x (1/6) at 40 digits is 0.005000...0001 and would round up; the exact quotient is a tie.
    const approximated = new Decimal('0.03').times(new Decimal(1).div(6));
    expect(approximated.toDecimalPlaces(2, Decimal.ROUND_HALF_EVEN).toFixed(2)).toBe('0.01');
    expect(moneyQuotient('0.03', '6').toFixed(2)).toBe('0.00');
  });

  test('when products of prices and amounts are long, then exactProduct keeps every digit', () => {
    const p = exactProduct('999999999999.99', '1234567.123456789012345', '9876543.21987654321');
    expect(p.sd()).toBeGreaterThan(40);
    expect(p.toFixed()).toBe(new Wide('999999999999.99').times('1234567.123456789012345').times('9876543.21987654321').toFixed());
  });

  test('when random amounts convert at random rates, then the result equals the 200-digit quotient rounded half-even', () => {
    const cents = fc.bigInt({ min: 1n, max: 10n ** 14n });
    const price = fc.integer({ min: 1, max: 10_000_000_000_000 }).map((n) => new Decimal(n).div(1_000_000));
    fc.assert(
      fc.property(cents, price, price, price, (c, bid, ask1, ask2) => {
        const amount = new Decimal(c.toString()).div(100);
        const divisor = exactProduct(ask1, ask2);
        const numerator = exactProduct(amount, bid);
        const wide = new Wide(numerator).div(divisor);
        const got = moneyQuotient(numerator, divisor);
        // Away from a tie the 200-digit quotient decides; at a tie, the even cent.
        const offTie = wide.times(100).minus(wide.times(100).floor()).minus(0.5).abs().gt('1e-150');
        if (offTie) expect(got.toFixed(2)).toBe(wideCents(numerator, divisor).toFixed(2));
        else expect(got.times(100).mod(2).isZero()).toBe(true);
      }),
      { seed: 10, numRuns: 2000 },
    );
  });
});
