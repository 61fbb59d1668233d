import { D, type Dec } from '../../platform/decimal';

/**
 * One random-walk step of a quote: the mid price moves by a normally distributed return
 * of `volatilityBps` basis points (standard deviation), the spread is kept, and both sides
 * are rounded to the instrument's digits. The bid never reaches zero.
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
  let newBid = mid.times(new D(1).plus(shock)).minus(spread.div(2)).toDecimalPlaces(digits);
  if (newBid.lte(0)) newBid = tick;
  const newAsk = D.max(newBid.plus(spread), newBid.plus(tick)).toDecimalPlaces(digits);
  return { bid: newBid, ask: newAsk };
}

/** Box-Muller: a standard normal sample from two uniform ones. */
function gaussian(random: () => number): number {
  const u = Math.max(random(), Number.EPSILON);
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}
