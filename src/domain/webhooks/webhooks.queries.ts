import { namedStatement } from '../../platform/named-sql';

/**
 * The hand-written statements of webhook fan-out and delivery, with named parameters. The
 * tables are mapped (WebhookDelivery, WebhookMessage, WebhookAttempt) for the schema, but
 * written with SQL: each step here is one round trip under a lock the ORM cannot express.
 */

/**
 * Fans events the relay is handing over (in its transaction, under its lock) out to one
 * message per subscribed active webhook; answers, per webhook, the last event it got. A
 * webhook with an affiliate_id takes only events about a customer of that affiliate (the
 * customer's affiliate at fan-out); events about no customer (a group change) go only to
 * webhooks without one. `webhook.test` goes to the webhook it names, only.
 */
export const FAN_OUT = namedStatement<{ event_ids: string }>(
  `with taken as (
     select e.id as event_id, e.seq as event_seq, e.type, e.data->>'webhook_id' as target, e.customer_id
       from domain_events e where e.id in (select value::uuid from jsonb_array_elements_text(:event_ids::jsonb))
   ), fanned as (
     insert into webhook_messages (webhook_id, event_id, event_seq, created_at)
     select w.id, c.event_id, c.event_seq, now() from taken c
       left join customers cu on cu.id = c.customer_id
       join webhooks w on w.is_active and
            case when c.type = 'webhook.test' then w.id::text = c.target
                 else (w.events is null or jsonb_exists(w.events, c.type))
                      and (w.affiliate_id is null or w.affiliate_id = cu.affiliate_id) end
     on conflict do nothing
     returning webhook_id, event_seq
   )
   select webhook_id, max(event_seq)::text as last_seq from fanned group by webhook_id`,
);

/** Active webhooks with an attempt due that nobody holds. */
export const WEBHOOKS_DUE = namedStatement<{ limit: number }>(
  `select w.id from webhooks w where w.is_active and (
      exists (select 1 from webhook_deliveries d where d.webhook_id = w.id and d.status = 'pending'
                 and d.next_attempt_at <= now() and (d.lease_until is null or d.lease_until < now()))
      or (exists (select 1 from webhook_messages m where m.webhook_id = w.id and m.delivery_id is null)
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
  `update webhooks set is_active = false, disabled_reason = :reason, failing_since = null, updated_at = now()
    where id = :webhook_id and is_active returning endpoint_url, affiliate_id`,
);

export const COUNT_DELIVERIES = namedStatement<{ webhook_id: string; status: string | null }>(
  `select count(*) as n from webhook_deliveries d where d.webhook_id = :webhook_id and (:status::text is null or d.status = :status)`,
);

export const DELIVERY_PAGE = namedStatement<{ webhook_id: string; status: string | null; limit: number; offset: number }>(
  `select d.id, d.webhook_id, d.status, d.event_count, d.attempts as attempts_in_round, d.next_attempt_at, d.delivered_at, d.created_at,
          (select json_agg(m.event_id order by m.event_seq) from webhook_messages m where m.delivery_id = d.id) as event_ids,
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
