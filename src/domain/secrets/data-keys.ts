import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { DataKey } from '../../platform/secret-box';
import { executeNamed } from '../../db/bound-statement';
import { CREATE_DEVELOPMENT_KEY, READ_DEVELOPMENT_KEY } from './secrets.queries';

/** The id values sealed under the database's development key record. */
export const DEVELOPMENT_KEY_ID = 'development';

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
