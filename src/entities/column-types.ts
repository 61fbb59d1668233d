import { BigIntType, DecimalType } from '@mikro-orm/core';

/**
 * Column types with their JavaScript form stated outright. MikroORM otherwise infers it
 * from decorator metadata, which esbuild-based runners (tsx) do not emit: there a bigint
 * column came back as a BigInt and a ticket failed its job schema. Logins and tickets are
 * bigint text; money, prices and terms are decimal text.
 */
export const bigintText = () => new BigIntType('string');
export const decimalText = () => new DecimalType('string');
