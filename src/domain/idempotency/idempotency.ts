import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { IdempotencyRecord } from '../../entities/idempotency-record.entity';
import { AppError, fieldError } from '../../platform/errors';
import { executeNamed } from '../../db/bound-statement';
import { CLAIM_KEY, DROP_EXPIRED_KEY } from './idempotency.queries';

const TTL_MS = 24 * 3600 * 1000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export type Begin = { kind: 'new'; recordId: string } | { kind: 'replay'; status: number; body: unknown };

export function requestHash(method: string, route: string, params: unknown, body: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([method, route, params ?? null, body ?? null]))
    .digest('hex');
}

/**
 * Claims an Idempotency-Key for a caller. The unique (scope, key)
 * row decides races: of two requests with one key, one inserts and runs, the other finds
 * it in flight (409) or completed (the stored answer is replayed). The same key with a
 * different request is 422. Keys live 24 hours.
 */
export async function beginIdempotent(em: EntityManager, scope: string, key: string, hash: string): Promise<Begin> {
  if (!KEY_PATTERN.test(key))
    throw fieldError('header', ['Idempotency-Key'], 'Idempotency-Key must be 1 to 255 visible ASCII characters');
  const expiresAt = new Date(Date.now() + TTL_MS);
  await executeNamed(em, DROP_EXPIRED_KEY.bind({ scope, key }));
  const inserted = await executeNamed<{ id: string }>(
    em,
    CLAIM_KEY.bind({ scope, key, request_hash: hash, expires_at: expiresAt }),
  );
  if (inserted.length) return { kind: 'new', recordId: inserted[0]!.id };

  const existing = await em.findOne(IdempotencyRecord, { scope, key }, { refresh: true });
  if (!existing) return beginIdempotent(em, scope, key, hash); // expired and removed meanwhile
  if (existing.requestHash !== hash) {
    throw fieldError('header', ['Idempotency-Key'], 'This Idempotency-Key was used with a different request');
  }
  if (existing.state === 'in_flight') {
    throw new AppError(409, 'IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed');
  }
  return { kind: 'replay', status: existing.responseStatus ?? 200, body: existing.responseBody };
}

export async function completeIdempotent(em: EntityManager, recordId: string, status: number, body: unknown): Promise<void> {
  await em.nativeUpdate(
    IdempotencyRecord,
    { id: recordId },
    { state: 'completed', responseStatus: status, responseBody: body as object, updatedAt: new Date() },
  );
}

/** A request that failed releases its key, so the client may retry it. */
export async function abandonIdempotent(em: EntityManager, recordId: string): Promise<void> {
  await em.nativeDelete(IdempotencyRecord, { id: recordId });
}
