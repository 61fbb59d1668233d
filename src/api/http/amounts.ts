import { z } from 'zod';
import { dec } from '../../platform/decimal';

/**
 * At most `places` decimals, judged on the number's exact text: a value with more than its
 * numeric column keeps is refused (422 decimal_max_places) rather than stored rounded.
 */
export function withPlaces<T extends z.ZodNumber>(schema: T, places: number): T {
  return schema.refine((v) => dec(v).decimalPlaces() <= places, {
    message: `Decimal input should have no more than ${places} decimal place${places === 1 ? '' : 's'}`,
    params: { type: 'decimal_max_places' },
  });
}

/** A positive amount with at most `places` decimals. */
export function decimalNumber(options: { places: number; max: number; positive?: boolean }) {
  const base = options.positive === false ? z.number().min(0) : z.number().gt(0);
  return withPlaces(base.max(options.max), options.places);
}

export const MoneyAmount = decimalNumber({ places: 2, max: 1e12 });
export const Volume = decimalNumber({ places: 2, max: 1000 }).describe('Lots, 0.01 to 1000, in steps of 0.01');
export const Price = z.number().gt(0).max(1e12);
export const Login = z.int().min(1).max(Number.MAX_SAFE_INTEGER);
export const LoginQuery = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
