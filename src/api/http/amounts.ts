import { z } from 'zod';
import { AMOUNT_MAX, PRICE_MAX, PRICE_MIN, VOLUME_MAX } from '../../platform/bounds';
import { withPlaces } from '../../platform/decimal-places';

/** A positive amount with at most `places` decimals. */
export function decimalNumber(options: { places: number; max: number; positive?: boolean }) {
  const base = options.positive === false ? z.number().min(0) : z.number().gt(0);
  return withPlaces(base.max(options.max), options.places);
}

// The bounds that keep every booking inside its money column: see platform/bounds.ts.
export const MoneyAmount = decimalNumber({ places: 2, max: AMOUNT_MAX });
export const Volume = decimalNumber({ places: 2, max: VOLUME_MAX }).describe('Lots, 0.01 to 1000, in steps of 0.01');
export const Price = z.number().min(PRICE_MIN).max(PRICE_MAX).describe('0.000001 to 10,000,000');
/** A distance in price; at most the 10 decimals its column keeps, so a tiny value is refused, not stored as 0. */
export const TrailingStop = withPlaces(z.number().gt(0).max(PRICE_MAX), 10).describe('A distance in price, at most 10 decimals');
export const Login = z.int().min(1).max(Number.MAX_SAFE_INTEGER);

const DIGITS = /^[0-9]{1,16}$/;

/**
 * A login, ticket or order id carried as text in a path or query: digits only (no sign,
 * hex, exponent or spaces, so `login=0x10` is not 16). The pattern is declared in the
 * OpenAPI document too, which is how a client router tells `/orders/pending/close` from
 * `/orders/{ticket}/close`: `pending` and `bulk-close` can never be a ticket.
 */
export function integerText(description: string) {
  return z
    .string()
    .transform((v, ctx) => {
      if (DIGITS.test(v)) return Number(v);
      ctx.addIssue({
        code: 'custom',
        message: 'Input should be a valid integer, unable to parse string as an integer',
        params: { type: 'int_parsing' },
      });
      return z.NEVER;
    })
    .pipe(z.number().int().min(1).max(Number.MAX_SAFE_INTEGER))
    .meta({ pattern: DIGITS.source, description });
}

export const LoginText = integerText('A trading account login');
export const TicketParam = integerText('An order ticket');
