import { namedStatement } from '../../platform/named-sql';

/**
 * The statements of provider callbacks and the inbound log that the ORM cannot say: the
 * claim of a report's key (an insert that yields to the call already holding it) and the
 * conditional updates of a reprocess.
 */

/**
 * Records a call and claims its report's key in one statement: no row comes back when another
 * call holds the key (committed, or in flight: the insert waits for it to end), so exactly one
 * call per (integration, external id, status) takes effect.
 */
export const CLAIM_INBOUND = namedStatement<{
  id: string;
  integration_id: string;
  source_ip: string | null;
  external_id: string;
  dedupe_key: string;
  body: string | null;
}>(
  `insert into integration_inbound (id, created_at, updated_at, integration_id, source_ip, signature_valid, external_id, dedupe_key, outcome, body)
   values (:id, now(), now(), :integration_id, :source_ip, true, :external_id, :dedupe_key, 'processed', :body)
   on conflict (integration_id, dedupe_key) where dedupe_key is not null do nothing
   returning id`,
);

/** A failed call taken again by a reprocess: it claims its report's key as it becomes `processed`. */
export const CLAIM_FAILED_INBOUND = namedStatement<{ id: string; dedupe_key: string }>(
  `update integration_inbound set outcome = 'processed', dedupe_key = :dedupe_key, error = null, updated_at = now()
    where id = :id and outcome = 'failed' returning id`,
);

/** Settles a reprocessed call that could not take effect (a duplicate, or failed again). */
export const SETTLE_FAILED_INBOUND = namedStatement<{ id: string; outcome: string; error: string | null }>(
  `update integration_inbound set outcome = :outcome, error = :error, updated_at = now() where id = :id and outcome = 'failed'`,
);

/** Why a processed call did nothing (a transition its intent's state does not allow). */
export const NOTE_INBOUND = namedStatement<{ id: string; error: string | null }>(
  'update integration_inbound set error = :error where id = :id',
);

/**
 * A call that changes nothing (a duplicate) marks the last call at most once a second, as a
 * settled one does: a storm of duplicates must not queue on the provider's row.
 */
export const TOUCH_INTEGRATION = namedStatement<{ id: string }>(
  `update integrations set last_inbound_at = now()
    where id = :id and (last_inbound_at is null or last_inbound_at < now() - interval '1 second')`,
);

/**
 * A call that took effect clears the last error and marks the last call, after its commit: at
 * most once a second under a stream of calls (the row is the provider's, shared by every call).
 */
export const TOUCH_INTEGRATION_SETTLED = namedStatement<{ id: string }>(
  `update integrations set last_inbound_at = now(), last_error = null
    where id = :id and (last_error is not null or last_inbound_at is null or last_inbound_at < now() - interval '1 second')`,
);

export const TOUCH_INTEGRATION_WITH_ERROR = namedStatement<{ id: string; error: string | null }>(
  'update integrations set last_inbound_at = now(), last_error = :error where id = :id',
);
