import Decimal from 'decimal.js';
import fc from 'fast-check';
import { convertAtDealerRate, CurrencyConverter } from '../../src/domain/prices/conversion';
import type { QuoteStore } from '../../src/domain/prices/quote-store';
import { Instrument } from '../../src/entities/instrument.entity';
import { D, dec, exactProduct, moneyQuotientDown } from '../../src/platform/decimal';

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

/** An independent rounding: the quotient at 200 digits, cut toward zero (exact quotients are checked separately). */
const Wide = Decimal.clone({ precision: 200, rounding: Decimal.ROUND_DOWN });
const wideCents = (n: Decimal.Value, d: Decimal.Value) => new Wide(n).div(d).toDecimalPlaces(2, Decimal.ROUND_DOWN);

describe('dealer-side conversion', () => {
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
    expect(convertAtDealerRate(dec('100'), gbpEur).toFixed(2)).toBe('113.61'); // 125 / 1.1002 = 113.6157..., cut
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

describe('one rounding toward zero from the exact quotient', () => {
  test.each([
    ['0.03', '6', '0.00'], // 0.005: half a cent is not a cent
    ['0.09', '6', '0.01'], // 0.015
    ['1', '8', '0.12'], // 0.125
    ['3', '8', '0.37'], // 0.375
    ['2', '3', '0.66'], // 0.666...: never up
    ['-1', '8', '-0.12'], // toward zero, not toward minus infinity
    ['-2', '3', '-0.66'],
    ['1.1', '1', '1.10'],
    ['1000000000000', '0.000001', '1000000000000000000.00'],
  ])('when %s / %s, then %s', (n, d, expected) => {
    expect(moneyQuotientDown(n, d).toFixed(2)).toBe(expected);
  });

  test('when a quotient is a whole number of cents, then a 40-digit approximation just below it does not cost a cent', () => {
    // 0.30 / 3 is exactly 0.10; 0.30 x (1/3) at 40 digits is 0.0999...9 and would be cut to 0.09.
    const approximated = new D('0.30').times(new D(1).div(3));
    expect(approximated.toDecimalPlaces(2, Decimal.ROUND_DOWN).toFixed(2)).toBe('0.09');
    expect(moneyQuotientDown('0.30', '3').toFixed(2)).toBe('0.10');
  });

  test('when products of prices and amounts are long, then exactProduct keeps every digit', () => {
    const p = exactProduct('999999999999.99', '1234567.123456789012345', '9876543.21987654321');
    expect(p.sd()).toBeGreaterThan(40);
    expect(p.toFixed()).toBe(new Wide('999999999999.99').times('1234567.123456789012345').times('9876543.21987654321').toFixed());
  });

  test('when random amounts convert at random rates, then the result is the largest cent not above the exact quotient', () => {
    const cents = fc.bigInt({ min: 1n, max: 10n ** 14n });
    const price = fc.integer({ min: 1, max: 10_000_000_000_000 }).map((n) => new Decimal(n).div(1_000_000));
    fc.assert(
      fc.property(cents, price, price, price, (c, bid, ask1, ask2) => {
        const amount = new Decimal(c.toString()).div(100);
        const divisor = exactProduct(ask1, ask2);
        const numerator = exactProduct(amount, bid);
        const got = new Wide(moneyQuotientDown(numerator, divisor));
        // got x divisor <= numerator < (got + 0.01) x divisor, exactly (products of terminating decimals).
        expect(got.times(divisor).lte(numerator)).toBe(true);
        expect(got.plus('0.01').times(divisor).gt(numerator)).toBe(true);
      }),
      { seed: 10, numRuns: 2000 },
    );
  });
});

describe('no sequence of conversions creates money', () => {
  /** A quote with bid < ask: a mid of 0.5 to 2 (5 digits) and a spread of 1 to 50 points. */
  const quote = fc
    .tuple(fc.integer({ min: 50_000, max: 200_000 }), fc.integer({ min: 1, max: 50 }))
    .map(([bid, spread]): [string, string] => [
      new Decimal(bid).div(100_000).toFixed(),
      new Decimal(bid + spread).div(100_000).toFixed(),
    ]);
  const CURRENCIES = ['USD', 'EUR', 'GBP'] as const;
  const currency = fc.constantFrom(...CURRENCIES);
  /** A transfer: from, to, and the share of the source's balance it moves (small ones too, where rounding bites). */
  const step = fc.record({
    from: currency,
    to: currency,
    share: fc.oneof(
      fc.integer({ min: 1, max: 10 }).map((c) => ({ cents: c })),
      fc.double({ min: 0, max: 1, noNaN: true }).map((f) => ({ fraction: f })),
    ),
  });

  test('when random transfers run across USD, EUR and GBP at random quotes, then the holdings never gain value at mid prices', async () => {
    await fc.assert(
      fc.asyncProperty(
        quote,
        quote,
        fc.array(fc.integer({ min: 1, max: 100_000 }), { minLength: 3, maxLength: 3 }),
        fc.array(step, { minLength: 1, maxLength: 60 }),
        async (eurusd, gbpusd, startCents, steps) => {
          // GBP and EUR join only through USD: crossing must not open an arbitrage either.
          const c = await converter({ EURUSD: eurusd, GBPUSD: gbpusd });
          const mid = (q: [string, string]) => new Decimal(q[0]).plus(q[1]).div(2);
          const mids: Record<string, Decimal> = { USD: new Decimal(1), EUR: mid(eurusd), GBP: mid(gbpusd) };
          const held: Record<string, Decimal> = {};
          CURRENCIES.forEach((cur, i) => (held[cur] = new Decimal(startCents[i]!).div(100)));
          const value = () => CURRENCIES.reduce((v, cur) => v.plus(held[cur]!.times(mids[cur]!)), new Decimal(0));
          const start = value();
          let before = start;
          for (const s of steps) {
            if (s.from === s.to) continue;
            const amount =
              'cents' in s.share
                ? Decimal.min(held[s.from]!, new Decimal(s.share.cents).div(100))
                : held[s.from]!.times(s.share.fraction).toDecimalPlaces(2, Decimal.ROUND_DOWN);
            if (amount.lte(0)) continue;
            const converted = convertAtDealerRate(amount, c.dealerRate(s.from, s.to)!);
            expect(converted.gte(0)).toBe(true);
            if (converted.isZero()) continue; // the API refuses a transfer that converts to nothing
            held[s.from] = held[s.from]!.minus(amount);
            held[s.to] = held[s.to]!.plus(converted);
            const after = value();
            expect(after.lte(before)).toBe(true);
            before = after;
          }
          expect(value().lte(start)).toBe(true);
        },
      ),
      { seed: 23, numRuns: 1000 },
    );
  });

  test('when 0.05 USD goes to EUR and back 100 times at EURUSD 1.1 / 1.1001, then the dollars only shrink', async () => {
    const c = await converter({ EURUSD: ['1.1', '1.1001'] });
    const there = c.dealerRate('USD', 'EUR')!;
    const back = c.dealerRate('EUR', 'USD')!;
    // Half-even rounding turned 0.05 USD into 0.05 EUR (0.04545...) and that into 0.06 USD (0.055).
    expect(convertAtDealerRate(dec('0.05'), there).toFixed(2)).toBe('0.04');
    let usd = dec('10');
    for (let trip = 0; trip < 100; trip++) {
      const eur = convertAtDealerRate(dec('0.05'), there);
      usd = usd.minus('0.05').plus(convertAtDealerRate(eur, back));
    }
    expect(usd.toFixed(2)).toBe('9.00'); // each trip 0.05 -> 0.04 EUR -> 0.04 USD
  });
});
