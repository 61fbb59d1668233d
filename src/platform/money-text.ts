import { z } from 'zod';

/**
 * Money on the wire: decimal text with exactly the two decimals of the currency's minor unit
 * (`"100.00"`, `"-0.50"`), so no client ever parses a balance into a binary float.
 */
export const MoneyText = z
  .string()
  .regex(/^-?[0-9]+\.[0-9]{2}$/)
  .describe('Decimal text with two decimals, e.g. "100.00"');

/** An ISO 4217 currency code. */
export const CurrencyCode = z
  .string()
  .regex(/^[A-Z]{3}$/)
  .describe('ISO 4217 code, three capital letters');
