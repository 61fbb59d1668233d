import { D } from '../../src/platform/decimal';
import { stepQuote } from '../../src/domain/prices/random-walk';

/** stepQuote: one random-walk step, with a deterministic source of randomness. */

/** A random() that returns the given values in turn (and then the last one forever). */
function sequence(...values: number[]): () => number {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)]!;
}

/** A seeded generator (mulberry32), so long walks are reproducible. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The Box-Muller sample the implementation draws from u and v. */
const gauss = (u: number, v: number) => Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);

const d = (v: string | number) => new D(v);

describe('stepQuote', () => {
  test('when the shock is zero (v = 0.25), then the quote does not move', () => {
    // cos(pi/2) is 6e-17, far below one tick.
    const { bid, ask } = stepQuote(d('1.10000'), d('1.10020'), 5, 50, sequence(0.5, 0.25));
    expect(bid.toFixed()).toBe('1.1');
    expect(ask.toFixed()).toBe('1.1002');
  });

  test('when the draw is u = e^-0.5 and v = 0 (a shock of +1 sd), then the mid moves up by exactly volatility_bps', () => {
    // gauss = sqrt(-2 ln u) * cos 0 = 1: mid 1.10010 * (1 + 0.0050) = 1.1056005, bid = mid - 0.0001 = 1.1055005 -> 1.1055 (half-even)
    const random = sequence(Math.exp(-0.5), 0);
    expect(gauss(Math.exp(-0.5), 0)).toBeCloseTo(1, 12);
    const { bid, ask } = stepQuote(d('1.10000'), d('1.10020'), 5, 50, random);
    expect(bid.toFixed()).toBe('1.1055');
    expect(ask.toFixed()).toBe('1.1057');
  });

  test('when the draw is a -1 sd shock (v = 0.5), then the mid moves down by volatility_bps', () => {
    const { bid, ask } = stepQuote(d('100.000'), d('100.020'), 3, 100, sequence(Math.exp(-0.5), 0.5));
    // mid 100.010 * 0.99 = 99.0099, bid = 98.9999 -> 99.000 (3 digits), ask = 99.020
    expect(bid.toFixed()).toBe('99');
    expect(ask.toFixed()).toBe('99.02');
  });

  test('when the new price falls between ticks, then both sides are rounded to the digits and the spread is kept', () => {
    const random = sequence(0.3, 0.1);
    const { bid, ask } = stepQuote(d('1.23456'), d('1.23470'), 5, 7, random);
    const mid = 1.23463 * (1 + gauss(0.3, 0.1) * 0.0007);
    expect(bid.decimalPlaces()).toBeLessThanOrEqual(5);
    expect(ask.decimalPlaces()).toBeLessThanOrEqual(5);
    expect(bid.toNumber()).toBeCloseTo(mid - 0.00007, 5);
    expect(ask.minus(bid).toFixed()).toBe('0.00014');
  });

  test('when random() returns 0, then the sample stays finite (u is clamped) and the bid stays positive', () => {
    const { bid, ask } = stepQuote(d('1.00000'), d('1.00010'), 5, 1000, sequence(0, 0.5));
    // gauss = -sqrt(-2 ln EPSILON) = -8.49: a 84.9 % fall, still above zero.
    expect(bid.isFinite()).toBe(true);
    expect(bid.gt(0)).toBe(true);
    expect(ask.gt(bid)).toBe(true);
    expect(bid.toNumber()).toBeCloseTo(1.00005 * (1 - 0.849) - 0.00005, 2);
  });

  test('when the price would reach zero or below, then the bid is one tick and the ask above it', () => {
    const { bid, ask } = stepQuote(d('0.01'), d('0.02'), 2, 1000, sequence(0, 0.5));
    expect(bid.toFixed()).toBe('0.01');
    expect(ask.toFixed()).toBe('0.02');
  });

  test('when the spread is narrower than one tick, then the ask is still one tick above the bid', () => {
    const { bid, ask } = stepQuote(d('100'), d('100.4'), 0, 10, sequence(0.5, 0.25));
    expect(ask.minus(bid).toFixed()).toBe('1');
  });

  test('when digits is 0, then prices are whole numbers', () => {
    const random = seeded(7);
    let q = { bid: d('39000'), ask: d('39002') };
    for (let i = 0; i < 200; i++) {
      q = stepQuote(q.bid, q.ask, 0, 25, random);
      expect(q.bid.isInteger()).toBe(true);
      expect(q.ask.isInteger()).toBe(true);
      expect(q.ask.minus(q.bid).toNumber()).toBe(2);
    }
  });

  test('when it walks 10,000 steps with a seeded random, then ask stays above bid, both positive, at the digits, spread kept', () => {
    const random = seeded(42);
    let q = { bid: d('1.08500'), ask: d('1.08515') };
    const bids = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      q = stepQuote(q.bid, q.ask, 5, 20, random);
      expect(q.bid.gt(0)).toBe(true);
      expect(q.ask.gt(q.bid)).toBe(true);
      expect(q.bid.decimalPlaces()).toBeLessThanOrEqual(5);
      expect(q.ask.decimalPlaces()).toBeLessThanOrEqual(5);
      expect(q.ask.minus(q.bid).toFixed()).toBe('0.00015');
      bids.add(q.bid.toFixed());
    }
    // It really walks.
    expect(bids.size).toBeGreaterThan(1000);
  });

  test('when the same seed is used twice, then the walk is the same (the function is pure given random)', () => {
    const walk = (seed: number) => {
      const random = seeded(seed);
      let q = { bid: d('150.100'), ask: d('150.125') };
      const out: string[] = [];
      for (let i = 0; i < 50; i++) {
        q = stepQuote(q.bid, q.ask, 3, 15, random);
        out.push(`${q.bid.toFixed()}/${q.ask.toFixed()}`);
      }
      return out;
    };
    expect(walk(1)).toEqual(walk(1));
    expect(walk(1)).not.toEqual(walk(2));
  });

  test('when many steps are drawn, then the returns have about the asked standard deviation and no drift', () => {
    const random = seeded(2024);
    const returns: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      const { bid } = stepQuote(d('1000.00000'), d('1000.00010'), 5, 10, random);
      returns.push(bid.plus('0.00005').div('1000.00005').minus(1).toNumber());
    }
    const mean = returns.reduce((a, b) => a + b, 0) / returns.length;
    const sd = Math.sqrt(returns.reduce((a, b) => a + (b - mean) ** 2, 0) / returns.length);
    expect(Math.abs(mean)).toBeLessThan(0.00003);
    expect(sd).toBeGreaterThan(0.00095);
    expect(sd).toBeLessThan(0.00105);
  });

  test('when volatility is given in basis points, then 10,000 bps is a 100 % standard deviation', () => {
    // +1 sd at 10 bps: 1 * (1 + 0.001) = 1.001
    const { bid } = stepQuote(d('0.99995'), d('1.00005'), 5, 10, sequence(Math.exp(-0.5), 0));
    expect(bid.plus('0.00005').toFixed()).toBe('1.001');
  });
});
