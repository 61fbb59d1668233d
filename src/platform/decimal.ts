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
