import { BigIntType, DecimalType } from '@mikro-orm/core';
import Decimal from 'decimal.js';

/**
 * Column types with their JavaScript form stated outright. MikroORM otherwise infers it
 * from decorator metadata, which esbuild-based runners (tsx) do not emit: there a bigint
 * column came back as a BigInt and a ticket failed its job schema. Logins and tickets are
 * bigint text; money, prices and terms are decimal text.
 */
export const bigintText = () => new BigIntType('string');

/**
 * MikroORM's DecimalType decides whether a value changed by comparing JavaScript floats:
 * above 2^53 cents two different balances compare equal, the flush skips the UPDATE, and
 * the ledger row is written for a balance that never changed. This compares the decimals
 * exactly.
 */
class ExactDecimalType extends DecimalType {
  override compareValues(a: unknown, b: unknown): boolean {
    if (a === null || a === undefined || b === null || b === undefined) return a === b;
    return new Decimal(String(a)).eq(new Decimal(String(b)));
  }
}

export const decimalText = () => new ExactDecimalType('string');

/** Money columns: 36 digits before the point, 2 after; platform/bounds.ts shows why nothing allowed overflows them. */
export const MONEY_COLUMN = 'numeric(38,2)';
