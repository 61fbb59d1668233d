import Decimal from 'decimal.js';

/**
 * Money and prices are decimals end to end: Postgres `numeric`, decimal.js in code.
 * JSON numbers from clients are converted through their shortest text form, which is
 * exactly what the client wrote (0.1 stays 0.1, never 0.1000000000000000055).
 */
export const D = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_EVEN });
export type Dec = Decimal;

export function dec(value: number | string | Decimal): Decimal {
  return new D(value);
}

/** Text for a numeric column. */
export function decText(value: number | string | Decimal): string {
  return new D(value).toFixed();
}

/** Numeric column text back to a JSON number, for terms and prices the spec types as numbers. */
export function num(value: string | null | undefined): number | null {
  return value === null || value === undefined ? null : Number(value);
}

/** Money rounded half-even to the currency's minor unit (2 decimals). */
export function money(value: number | string | Decimal): Decimal {
  return new D(value).toDecimalPlaces(2, Decimal.ROUND_HALF_EVEN);
}

/** Wide enough that a product of a few prices and an amount is never rounded (decimal.js rounds results to its precision). */
const Exact = Decimal.clone({ precision: 1000, rounding: Decimal.ROUND_HALF_EVEN });

/** The exact product of decimals: no rounding at 40 significant digits. */
export function exactProduct(...factors: Array<number | string | Decimal>): Decimal {
  return factors.reduce<Decimal>((product, f) => product.times(new Exact(f)), new Exact(1));
}

/** The decimal as an integer scaled by 10^-exponent: 12.345 is [12345n, 3]. Exact for any finite value. */
function scaled(value: Decimal): [bigint, number] {
  const text = value.toFixed();
  const point = text.indexOf('.');
  if (point < 0) return [BigInt(text), 0];
  return [BigInt(text.slice(0, point) + text.slice(point + 1)), text.length - point - 1];
}

/**
 * numerator / denominator rounded toward zero to the currency's minor unit (2 decimals), exactly:
 * the division is done on integers, so a quotient that is not a terminating decimal (an amount
 * divided by an ask) is cut once, from its exact value, never from a 40-digit approximation
 * that could sit a hair above a whole cent. Toward zero, not half-even: this is what a
 * conversion credits, and rounding up by even half a cent would let a round trip make money.
 */
export function moneyQuotientDown(numerator: number | string | Decimal, denominator: number | string | Decimal): Decimal {
  const [n, nExp] = scaled(new D(numerator));
  const [d, dExp] = scaled(new D(denominator));
  if (d === 0n) throw new RangeError('division by zero');
  // n·10^-nExp / (d·10^-dExp) in cents = n·10^(dExp+2) / (d·10^nExp); bigint division truncates toward zero.
  const cents = (n * 10n ** BigInt(dExp + 2)) / (d * 10n ** BigInt(nExp));
  return new D(cents.toString()).div(100);
}
