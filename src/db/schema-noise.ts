/**
 * MikroORM (6 and 7) reads a `default nextval('our_seq')` column as a serial it has to recreate, and
 * so proposes the same type and default changes in every schema diff. These statements are
 * that noise; anything else in a diff between the entities and the migrated schema is real.
 */
export const SEQUENCE_NOISE: readonly RegExp[] = [
  /alter column "\w+" type (bigint|int8) using/,
  /alter column "\w+" set default nextval\(/,
  /create sequence if not exists "\w+_seq";/,
  /select setval\('\w+_seq'/,
];

export const isSequenceNoise = (statement: string): boolean => SEQUENCE_NOISE.some((re) => re.test(statement));
