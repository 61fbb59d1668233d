import { namedStatement } from '../../platform/named-sql';

/** An expired claim of this key is dropped first, so the key can be claimed again. */
export const DROP_EXPIRED_KEY = namedStatement<{ scope: string; key: string }>(
  `delete from idempotency_keys where scope = :scope and key = :key and expires_at < now()`,
);

/** The claim itself: the unique (scope, key) row decides a race; a loser gets no row back. */
export const CLAIM_KEY = namedStatement<{ scope: string; key: string; request_hash: string; expires_at: Date }>(
  `insert into idempotency_keys (id, created_at, updated_at, scope, key, request_hash, state, expires_at)
   values (gen_random_uuid(), now(), now(), :scope, :key, :request_hash, 'in_flight', :expires_at)
   on conflict (scope, key) do nothing returning id`,
);
