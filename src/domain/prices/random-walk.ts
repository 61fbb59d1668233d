import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Instrument } from '../../entities/instrument.entity';
import { D, dec, type Dec } from '../../platform/decimal';
import type { QuoteStore } from './quote-store';
import { PRICE_MAX, PRICE_MIN } from '../../platform/bounds';

/**
 * One random-walk step of a quote: the mid price moves by a normally distributed return
 * of `volatilityBps` basis points (standard deviation), the spread is kept, and both sides
 * are rounded to the instrument's digits. Both sides stay within the price bounds
 * (PRICE_MIN to PRICE_MAX) that keep every booking inside its money column.
 */
export function stepQuote(
  bid: Dec,
  ask: Dec,
  digits: number,
  volatilityBps: number,
  random: () => number = Math.random,
): { bid: Dec; ask: Dec } {
  const spread = ask.minus(bid);
  const mid = bid.plus(spread.div(2));
  const shock = gaussian(random) * (volatilityBps / 10_000);
  const tick = new D(10).pow(-digits);
  const floor = D.max(new D(PRICE_MIN), tick).toDecimalPlaces(digits, D.ROUND_UP);
  let newBid = mid.times(new D(1).plus(shock)).minus(spread.div(2)).toDecimalPlaces(digits);
  if (newBid.lt(floor)) newBid = floor;
  let newAsk = D.max(newBid.plus(spread), newBid.plus(tick)).toDecimalPlaces(digits);
  if (newAsk.gt(PRICE_MAX)) {
    newAsk = new D(PRICE_MAX);
    newBid = D.max(floor, D.min(newBid, newAsk.minus(D.max(spread, tick)))).toDecimalPlaces(digits);
  }
  return { bid: newBid, ask: newAsk };
}

/** Box-Muller: a standard normal sample from two uniform ones. */
function gaussian(random: () => number): number {
  const u = Math.max(random(), Number.EPSILON);
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** Whether the random walk runs, and for what. */
export const RandomWalkSchema = z.object({
  enabled: z.boolean(),
  symbols: z.array(z.string()),
  interval_ms: z.int().nullable(),
  volatility_bps: z.number().nullable(),
});
export type RandomWalkView = z.output<typeof RandomWalkSchema>;

export function randomWalkView(
  schedule: { symbols: string[]; interval_ms: number | null; volatility_bps: number | null } | undefined,
): RandomWalkView {
  return schedule ? { enabled: true, ...schedule } : { enabled: false, symbols: [], interval_ms: null, volatility_bps: null };
}

/**
 * Moves the quotes of `symbols` one random-walk step and answers the symbols moved. Symbols
 * without a quote yet are skipped: the walk starts from a price someone set.
 */
export async function walkQuotes(
  em: EntityManager,
  store: QuoteStore,
  symbols: string[],
  volatilityBps: number,
): Promise<string[]> {
  const [quotes, instruments] = await Promise.all([
    store.getMany(symbols),
    em.find(Instrument, { symbol: { $in: symbols } }, { fields: ['symbol', 'digits'] }),
  ]);
  const digits = new Map(instruments.map((i) => [i.symbol, i.digits]));
  const next = [...quotes.values()]
    .filter((q) => digits.has(q.symbol))
    .map((q) => {
      const step = stepQuote(dec(q.bid), dec(q.ask), digits.get(q.symbol)!, volatilityBps);
      return { symbol: q.symbol, bid: step.bid.toFixed(), ask: step.ask.toFixed() };
    });
  await store.setMany(next);
  return next.map((q) => q.symbol);
}
