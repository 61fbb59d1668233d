import type { z } from 'zod';
import { dec } from './decimal';

/**
 * At most `places` decimals, judged on the number's exact text: a value with more than its
 * numeric column keeps is refused (422 decimal_max_places) rather than stored rounded. The
 * OpenAPI description states it as `multipleOf` (0.01 for two places), so a generated client
 * can refuse it before sending; a validator should judge it on the decimal text, as this does,
 * since 0.07 / 0.01 is not a whole number in binary floating point.
 */
export function withPlaces<T extends z.ZodNumber>(schema: T, places: number): T {
  return schema
    .refine((v) => dec(v).decimalPlaces() <= places, {
      message: `Decimal input should have no more than ${places} decimal place${places === 1 ? '' : 's'}`,
      params: { type: 'decimal_max_places' },
    })
    .meta({ multipleOf: Number(`1e-${places}`) });
}
