import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DataKey } from '../../platform/secret-box';
import { executeNamed } from '../../db/bound-statement';
import { CREATE_DEVELOPMENT_KEY, READ_DEVELOPMENT_KEY } from './secrets.queries';

/** The id values sealed under the database's development key record. */
export const DEVELOPMENT_KEY_ID = 'development';
/** The row of the development token-signing key, beside the data key. */
export const DEVELOPMENT_JWT_KEY_ID = 'jwt-signing';

/** The configuration the data keys are resolved from, handed in by the composition root. */
export interface DataKeyOptions {
  /** DATA_ENCRYPTION_KEYS, when set. */
  dataKeys: readonly DataKey[] | undefined;
  production: boolean;
}

/**
 * The keys this process seals and opens secrets with. DATA_ENCRYPTION_KEYS when set; else
 * (never in production: configuration refuses that) the development key in the database,
 * created by whichever process starts first. The insert does nothing when a row exists, so
 * processes starting at once all read the one that won. Outside production the development
 * key also stays readable after DATA_ENCRYPTION_KEYS is set, so the re-seal job can move
 * what was sealed under it.
 */
export async function resolveDataKeys(
  options: DataKeyOptions,
  em: EntityManager,
): Promise<{ keys: DataKey[]; development: boolean }> {
  const configured = options.dataKeys;
  if (configured && options.production) return { keys: [...configured], development: false };
  if (!configured) {
    await executeNamed(em, CREATE_DEVELOPMENT_KEY.bind({ id: DEVELOPMENT_KEY_ID, key: randomBytes(32).toString('base64') }));
  }
  const [row] = await executeNamed<{ key: string }>(em, READ_DEVELOPMENT_KEY.bind({ id: DEVELOPMENT_KEY_ID }));
  if (!configured) {
    if (!row) throw new Error('the development data key was neither created nor found');
    return { keys: [{ id: DEVELOPMENT_KEY_ID, key: Buffer.from(row.key, 'base64') }], development: true };
  }
  const extra = row && !configured.some((k) => k.id === DEVELOPMENT_KEY_ID);
  return {
    keys: extra ? [...configured, { id: DEVELOPMENT_KEY_ID, key: Buffer.from(row.key, 'base64') }] : [...configured],
    development: false,
  };
}

/**
 * The token-signing key outside production when JWT_SECRET is unset: created in the database by
 * whichever process starts first and read by every other, as the development data key is, so a
 * restart does not sign everyone out and an API and its workers agree on tokens. Configuration
 * refuses production without JWT_SECRET, so this never signs a production token.
 */
export async function developmentJwtSecret(em: EntityManager): Promise<string> {
  await executeNamed(em, CREATE_DEVELOPMENT_KEY.bind({ id: DEVELOPMENT_JWT_KEY_ID, key: randomBytes(32).toString('base64url') }));
  const [row] = await executeNamed<{ key: string }>(em, READ_DEVELOPMENT_KEY.bind({ id: DEVELOPMENT_JWT_KEY_ID }));
  if (!row) throw new Error('the development token-signing key was neither created nor found');
  return row.key;
}
