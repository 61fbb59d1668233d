import type { z } from 'zod';
import { dec } from './decimal';

/**
 * At most `places` decimals, judged on the number's exact text: a value with more than its
 * numeric column keeps is refused (422 decimal_max_places) rather than stored rounded. The
 * OpenAPI description states it as `x-decimal-places`, not as `multipleOf: 0.01`: validators
 * divide in binary floating point, where 33.33 / 0.01 is 3332.9999999999995, so Prism and ajv
 * would refuse amounts the service rightly takes.
 */
export function withPlaces<T extends z.ZodNumber>(schema: T, places: number): T {
  return schema
    .refine((v) => dec(v).decimalPlaces() <= places, {
      message: `Decimal input should have no more than ${places} decimal place${places === 1 ? '' : 's'}`,
      params: { type: 'decimal_max_places' },
    })
    .meta({ 'x-decimal-places': places });
}
