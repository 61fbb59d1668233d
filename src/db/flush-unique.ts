import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Flushes, turning a unique-constraint violation into the caller's own error (409 NAME_TAKEN,
 * EMAIL_TAKEN, ...): the database, not a read before the write, decides what is taken, so two
 * racing creations cannot both pass.
 */
export async function flushUnique(em: EntityManager, taken: () => Error): Promise<void> {
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) throw taken();
    throw err;
  }
}
