import { z } from 'zod';
import { dec } from '../../platform/decimal';

/** A positive amount with at most `places` decimals (JSON number; read through its exact text). */
export function decimalNumber(options: { places: number; max: number; positive?: boolean }) {
  const base = options.positive === false ? z.number().min(0) : z.number().gt(0);
  return base.max(options.max).refine((v) => dec(v).decimalPlaces() <= options.places, {
    message: `Decimal input should have no more than ${options.places} decimal places`,
    params: { type: 'decimal_max_places' },
  });
}

export const MoneyAmount = decimalNumber({ places: 2, max: 1e12 });
export const Volume = decimalNumber({ places: 2, max: 1000 }).describe('Lots, 0.01 to 1000, in steps of 0.01');
export const Price = z.number().gt(0).max(1e12);
export const Login = z.int().min(1).max(Number.MAX_SAFE_INTEGER);
export const LoginQuery = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
