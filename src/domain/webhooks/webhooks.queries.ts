import { namedStatement } from '../../platform/named-sql';

/**
 * The hand-written statements of webhook dispatch and delivery, with named parameters. The
 * tables are mapped (WebhookDelivery, WebhookAttempt) for the schema, but
 * written with SQL: each step here is one round trip under a lock the ORM cannot express.
 */

/**
 * The active webhooks that may want some of the events the relay is handing over, with the
 * publication number of the batch's last event: the relay queues a delivery run of each after
 * its commit. Types only (and a `webhook.test` event's target): the affiliate filter applies at
 * the claim, and a run that finds nothing for it costs one claim.
 */
export const WEBHOOKS_TO_KICK = namedStatement<{ events: string }>(
  `with batch as (
     select t.type, t.target from jsonb_to_recordset(:events::jsonb) as t(type text, target text)
   )
   select w.id as webhook_id from webhooks w
    where w.is_active and exists (
      select 1 from batch b
       where case when b.type = 'webhook.test' then w.id::text = b.target
                  else w.events is null or jsonb_exists(w.events, b.type) end)`,
);

/**
 * Active webhooks with an attempt due that nobody holds: an open delivery whose time has come
 * and whose lease (if any) has lapsed, or events published past its cursor and no open
 * delivery. The second may find only events the webhook does not take: its claim then moves
 * the cursor past them and the webhook is not due again until more are published.
 */
export const WEBHOOKS_DUE = namedStatement<{ limit: number }>(
  `select w.id from webhooks w where w.is_active and (
      exists (select 1 from webhook_deliveries d where d.webhook_id = w.id and d.status = 'pending'
                 and d.next_attempt_at <= now() and (d.lease_until is null or d.lease_until < now()))
      or (exists (select 1 from domain_events e where e.publication_seq > w.cursor_seq)
          and not exists (select 1 from webhook_deliveries d where d.webhook_id = w.id and d.status = 'pending')))
    limit :limit`,
);

/** One call of the delivery step function (src/db/functions/webhook_delivery_steps.sql). */
export const DELIVERY_STEPS = namedStatement<{
  webhook_id: string;
  lease_ms: number;
  claim: number;
  /** JSON array of {id, attempt_id, started_at, duration_ms, status_code, response_body}. */
  done: string;
  /** JSON array of delivery ids claimed and not attempted. */
  release: string;
  clear_failing: boolean;
  /** JSON array of delivery ids the caller holds and is still sending (the claim goes behind them). */
  held: string;
}>(
  `select * from webhook_delivery_steps(:webhook_id::uuid, :lease_ms::int, :claim::int, :done::jsonb, :release::jsonb,
     :clear_failing::boolean, :held::jsonb)`,
);

/** Records attempts through the one function that writes them (a JSON array, as DELIVERY_STEPS's `done`). */
export const RECORD_ATTEMPTS = namedStatement<{ attempts: string }>(`select webhook_attempts_record(:attempts::jsonb)`);

export const FINISH_ATTEMPT = namedStatement<{ status: 'failed' | 'pending'; next_attempt_at: Date | null; delivery_id: string }>(
  `update webhook_deliveries set status = :status, next_attempt_at = coalesce(:next_attempt_at, next_attempt_at), lease_until = null,
          updated_at = now() where id = :delivery_id`,
);

export const MARK_FAILING = namedStatement<{ now: Date; webhook_id: string }>(
  'update webhooks set failing_since = coalesce(failing_since, :now) where id = :webhook_id returning failing_since',
);

export const DISABLE_WEBHOOK = namedStatement<{ reason: string; webhook_id: string }>(
  `update webhooks set is_active = false, disabled_reason = :reason, failing_since = null, updated_at = now(),
          paused_seq = nextval('domain_event_publication_seq')
    where id = :webhook_id and is_active returning endpoint_url, affiliate_id`,
);

/**
 * A webhook turned off by staff: the publication number drawn now ends what it is owed (what
 * lies between its cursor and this number goes out when it is turned on again).
 */
export const PAUSE_WEBHOOK = namedStatement<{ webhook_id: string }>(
  `update webhooks set paused_seq = nextval('domain_event_publication_seq') where id = :webhook_id`,
);

/**
 * A webhook turned on again: the events it was owed when it was turned off (past its cursor, up
 * to the number drawn then, that it takes) become pending deliveries, batch_size_max each in
 * publication order, sent before anything newer; the cursor moves to a fresh publication
 * number, so the events written while it was off are not for it. The caller holds the relay's
 * lock: every event numbered before the pause has committed.
 */
export const RESUME_WEBHOOK = namedStatement<{ webhook_id: string }>(
  `with w as (
     select id, batch_size_max, events, affiliate_id, cursor_seq, paused_seq from webhooks where id = :webhook_id
   ), hit as (
     select e.id, e.seq, e.publication_seq, row_number() over (order by e.publication_seq) as r, w.batch_size_max
       from w join domain_events e on e.publication_seq > w.cursor_seq and e.publication_seq <= w.paused_seq
       left join customers cu on cu.id = e.customer_id
      where case when e.type = 'webhook.test' then e.data->>'webhook_id' = w.id::text
                 else (w.events is null or jsonb_exists(w.events, e.type))
                      and (w.affiliate_id is null or w.affiliate_id = cu.affiliate_id) end
   ), made as (
     insert into webhook_deliveries (id, webhook_id, created_at, updated_at, status, event_count, first_event_seq,
                                     first_publication_seq, last_publication_seq, event_ids, attempts, next_attempt_at)
     select gen_random_uuid(), :webhook_id::uuid, now(), now(), 'pending', count(*), min(h.seq), min(h.publication_seq),
            max(h.publication_seq), array_agg(h.id order by h.publication_seq), 0, now()
       from hit h group by (h.r - 1) / h.batch_size_max
   )
   update webhooks set cursor_seq = nextval('domain_event_publication_seq'), paused_seq = null where id = :webhook_id`,
);

export const COUNT_DELIVERIES = namedStatement<{ webhook_id: string; status: string | null }>(
  `select count(*) as n from webhook_deliveries d where d.webhook_id = :webhook_id and (:status::text is null or d.status = :status)`,
);

export const DELIVERY_PAGE = namedStatement<{ webhook_id: string; status: string | null; limit: number; offset: number }>(
  `select d.id, d.webhook_id, d.status, d.event_count, d.attempts as attempts_in_round, d.next_attempt_at, d.delivered_at, d.created_at,
          to_json(d.event_ids) as event_ids,
          (select json_agg(json_build_object('attempt', a.attempt, 'started_at', a.started_at, 'duration_ms', a.duration_ms,
                  'status_code', a.status_code, 'error', a.error, 'response_body', a.response_body) order by a.attempt)
             from webhook_attempts a where a.delivery_id = d.id) as attempts
     from webhook_deliveries d where d.webhook_id = :webhook_id and (:status::text is null or d.status = :status)
    order by d.created_at desc, d.first_event_seq desc limit :limit offset :offset`,
);

/** The secret a rotation replaced, while it still signs (24 hours after the rotation). */
export const PREVIOUS_SECRET = namedStatement<{ webhook_id: string }>(
  'select previous_secret_sealed from webhooks where id = :webhook_id and previous_secret_expires_at > now()',
);

export const LOCK_WEBHOOK = namedStatement<{ webhook_id: string }>(
  'select is_active from webhooks where id = :webhook_id for update',
);

export const LOCK_DELIVERY = namedStatement<{ delivery_id: string; webhook_id: string }>(
  'select status from webhook_deliveries where id = :delivery_id and webhook_id = :webhook_id for update',
);

export const REOPEN_DELIVERY = namedStatement<{ delivery_id: string }>(
  `update webhook_deliveries set status = 'pending', attempts = 0, next_attempt_at = now(), lease_until = null,
          delivered_at = null, updated_at = now() where id = :delivery_id`,
);

/** What the active webhooks subscribe to: every type (a webhook with no list), or the union of their lists. */
export const SUBSCRIBED_TYPES = namedStatement<Record<string, never>>(
  `select count(*)::int as active, coalesce(bool_or(w.events is null), false) as every_type,
          coalesce((select jsonb_agg(distinct t.value) from webhooks v, jsonb_array_elements_text(v.events) t
                     where v.is_active and jsonb_typeof(v.events) = 'array'), '[]'::jsonb) as types
     from webhooks w where w.is_active`,
);
