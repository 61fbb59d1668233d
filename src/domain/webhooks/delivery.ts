import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { SecretBox } from '../../platform/crypto';
import { recordAudit } from '../audit/audit';
import { recordEvent } from '../events/outbox';
import type { SendResult, WebhookSender } from './sender';
import { signedHeaders, signingKey } from './signature';

/**
 * Delays before attempts 2 to 8 (the Svix-like schedule: immediately, 5 s, 5 min, 30 min,
 * 2 h, 5 h, 10 h, 10 h), each with ±10 % jitter: about 27.6 hours from first to last.
 */
export const RETRY_DELAYS_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
/** Every attempt failing this long turns the webhook off. */
export const DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;
/** Retry-After is honoured between these (the schedule's bounds). */
const RETRY_AFTER_MIN_MS = 1000;
const RETRY_AFTER_MAX_MS = RETRY_DELAYS_MS[RETRY_DELAYS_MS.length - 1];

/** The delay before the next attempt after `attemptsMade` failed ones of this round. */
export function nextDelayMs(attemptsMade: number, retryAfterMs: number | undefined, random = Math.random): number {
  if (retryAfterMs !== undefined) return Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, retryAfterMs));
  const base = RETRY_DELAYS_MS[Math.min(attemptsMade, RETRY_DELAYS_MS.length) - 1] ?? RETRY_DELAYS_MS[0];
  return Math.round(base * (0.9 + 0.2 * random()));
}

export interface Claim {
  deliveryId: string;
  webhookId: string;
  url: string;
  secretSealed: string;
  /** Attempts of this round, this one included. */
  attemptsInRound: number;
  eventCount: number;
  body: string;
  /** Whether the webhook had a failure streak when claimed (a success then clears it). */
  failing: boolean;
}

const LEASE = "now() + ? * interval '1 millisecond'";

/** The request body, built by Postgres from the stored events in write order: {"events": [{id, type, created_at, data}]}. */
const BODY = `json_build_object('events', coalesce(json_agg(json_build_object(
    'id', e.id, 'type', e.type,
    'created_at', to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'data', e.data) order by b.event_seq), '[]'::json))::text as body, count(*)::int as n`;

/**
 * Takes the next attempt of one webhook, if one is due and nobody holds it: the oldest open
 * delivery (ordered by its first event), or else a new delivery of the oldest messages not yet
 * sent, at most batch_size_max of them. Runs in the caller's transaction, under the webhook's
 * row lock, so two workers never build two batches of one webhook or hold one delivery at
 * once; the lease (timeout plus a margin) is what another worker waits out after a crash. A
 * webhook is served strictly one delivery at a time, in event order: an account's events
 * arrive in the order they were written, and a later batch never overtakes one being retried.
 */
export async function claimDelivery(tx: EntityManager, webhookId: string, leaseMs: number): Promise<Claim | null> {
  const [webhook] = await tx.execute<
    Array<{
      endpoint_url: string;
      secret_sealed: string;
      batch_size_max: number;
      is_active: boolean;
      failing: boolean;
      open_id: string | null;
      due: boolean | null;
      leased: boolean | null;
      abandoned: boolean | null;
    }>
  >(
    // NO KEY UPDATE: the dispatcher's message inserts (foreign keys to this row) need not wait.
    `select w.endpoint_url, w.secret_sealed, w.batch_size_max, w.is_active, w.failing_since is not null as failing,
            d.id as open_id, d.next_attempt_at <= now() as due, coalesce(d.lease_until > now(), false) as leased,
            d.lease_until is not null as abandoned
       from webhooks w left join lateral (
         select id, next_attempt_at, lease_until from webhook_deliveries
          where webhook_id = w.id and status = 'pending' order by first_event_seq, created_at limit 1) d on true
      where w.id = ? for no key update of w`,
    [webhookId],
  );
  if (!webhook?.is_active) return null;
  const claim = (deliveryId: string, attemptsInRound: number, payload: { body: string; n: number }): Claim => ({
    deliveryId,
    webhookId,
    url: webhook.endpoint_url,
    secretSealed: webhook.secret_sealed,
    attemptsInRound,
    eventCount: payload.n,
    body: payload.body,
    failing: webhook.failing,
  });

  if (webhook.open_id) {
    if (webhook.leased || !webhook.due) return null;
    if (webhook.abandoned) {
      // A worker took it and never recorded an outcome (killed mid-attempt): said so in the list.
      await tx.execute(
        `insert into webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
         select ?, ?, coalesce(max(attempt), 0) + 1, now(), 0, null, 'no outcome recorded: the worker stopped during the attempt', null
           from webhook_attempts where delivery_id = ?`,
        [randomUUID(), webhook.open_id, webhook.open_id],
      );
    }
    const [row] = await tx.execute<Array<{ attempts: number; body: string; n: number }>>(
      `with d as (
         update webhook_deliveries set attempts = attempts + 1, lease_until = ${LEASE}, updated_at = now() where id = ? returning attempts
       ), b as (select event_id, event_seq from webhook_messages where delivery_id = ?)
       select (select attempts from d), ${BODY} from b join domain_events e on e.id = b.event_id`,
      [leaseMs, webhook.open_id, webhook.open_id],
    );
    return claim(webhook.open_id, row!.attempts, row!);
  }

  // A new delivery of the next messages, and its body, in one statement.
  const id = randomUUID();
  const [made] = await tx.execute<Array<{ body: string; n: number }>>(
    `with b as (
       select event_id, event_seq from webhook_messages where webhook_id = ? and delivery_id is null order by event_seq limit ?
     ), d as (
       insert into webhook_deliveries (id, webhook_id, created_at, updated_at, status, event_count, first_event_seq, attempts, next_attempt_at, lease_until)
       select ?, ?, now(), now(), 'pending', count(*), min(event_seq), 1, now(), ${LEASE} from b having count(*) > 0
       returning id
     ), m as (
       update webhook_messages w set delivery_id = d.id from d, b where w.webhook_id = ? and w.event_id = b.event_id returning 1
     )
     select ${BODY}, (select count(*) from m) as marked from b join domain_events e on e.id = b.event_id`,
    [webhookId, webhook.batch_size_max, id, webhookId, leaseMs, webhookId],
  );
  if (!made || made.n === 0) return null;
  return claim(id, 1, made);
}

export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'disabled';

/** Records one attempt and decides what follows it, in the caller's transaction. */
export async function recordAttempt(
  tx: EntityManager,
  claim: Claim,
  result: SendResult,
  startedAt: Date,
  now = new Date(),
): Promise<AttemptOutcome> {
  const attempt = `insert into webhook_attempts (id, delivery_id, attempt, started_at, duration_ms, status_code, error, response_body)
       select ?, ?, coalesce(max(attempt), 0) + 1, ?, ?, ?, ?, ? from webhook_attempts where delivery_id = ?`;
  const attemptValues = [
    randomUUID(),
    claim.deliveryId,
    startedAt,
    result.durationMs,
    result.statusCode,
    result.error,
    result.responseBody,
    claim.deliveryId,
  ];
  if (result.ok) {
    // One statement: the attempt, the delivery done, and the failure streak (if any) over.
    await tx.execute(
      `with a as (${attempt}), d as (
         update webhook_deliveries set status = 'delivered', delivered_at = now(), lease_until = null, updated_at = now() where id = ?
       ) ${claim.failing ? 'update webhooks set failing_since = null where id = ?' : 'select ?::uuid'}`,
      [...attemptValues, claim.deliveryId, claim.webhookId],
    );
    return 'delivered';
  }
  await tx.execute(attempt, attemptValues);
  const finish = (status: 'failed' | 'pending', nextAt?: Date) =>
    tx.execute(
      `update webhook_deliveries set status = ?, next_attempt_at = coalesce(?, next_attempt_at), lease_until = null, updated_at = now() where id = ?`,
      [status, nextAt ?? null, claim.deliveryId],
    );
  if (result.statusCode === 410) {
    await finish('failed');
    await disableWebhook(tx, claim.webhookId, 'The endpoint answered 410 Gone');
    return 'disabled';
  }
  const [webhook] = await tx.execute<Array<{ failing_since: Date }>>(
    'update webhooks set failing_since = coalesce(failing_since, ?) where id = ? returning failing_since',
    [now, claim.webhookId],
  );
  if (webhook && now.getTime() - new Date(webhook.failing_since).getTime() >= DISABLE_AFTER_MS) {
    await finish('failed');
    await disableWebhook(tx, claim.webhookId, 'Every attempt failed for 5 days');
    return 'disabled';
  }
  if (claim.attemptsInRound >= MAX_ATTEMPTS) {
    await finish('failed');
    return 'failed';
  }
  await finish('pending', new Date(now.getTime() + nextDelayMs(claim.attemptsInRound, result.retryAfterMs)));
  return 'retry';
}

/** Turns a webhook off with a reason, audited, and writes a `webhook.disabled` event. */
async function disableWebhook(tx: EntityManager, webhookId: string, reason: string): Promise<void> {
  const [row] = await tx.execute<Array<{ endpoint_url: string; affiliate_id: string | null }>>(
    `update webhooks set is_active = false, disabled_reason = ?, failing_since = null, updated_at = now()
      where id = ? and is_active returning endpoint_url, affiliate_id`,
    [reason, webhookId],
  );
  if (!row) return;
  const data = { webhook_id: webhookId, endpoint_url: row.endpoint_url, affiliate_id: row.affiliate_id, reason };
  recordEvent(tx, { type: 'webhook.disabled', aggregateType: 'webhook', aggregateId: webhookId, data });
  recordAudit(tx, 'system', { action: 'webhook.disabled', entityType: 'webhook', entityId: webhookId, after: data });
}

export interface DeliverOptions {
  sender: WebhookSender;
  secrets: SecretBox;
  timeoutMs: number;
  /** Stop starting new batches after this long (`more` then says so: queue a continuation). */
  budgetMs: number;
}

/**
 * A worker's turn at one webhook: sends its due batches one after another until none is
 * due, an attempt fails (the retry is due later: the slot is freed at once) or the budget is
 * spent (`more`: the caller queues a continuation, behind other webhooks' jobs). Recording an
 * attempt and claiming the next share one transaction. A slow endpoint holds the slot for at
 * most one timeout per attempt.
 */
export async function deliverWebhook(em: EntityManager, webhookId: string, options: DeliverOptions) {
  const started = Date.now();
  const leaseMs = options.timeoutMs + 5000;
  const outcomes: AttemptOutcome[] = [];
  let events = 0;
  let more = false;
  let claim = await em.transactional((tx) => claimDelivery(tx as EntityManager, webhookId, leaseMs));
  while (claim) {
    const current: Claim = claim;
    const key = signingKey(options.secrets.open(current.secretSealed));
    const at = new Date();
    const result = await options.sender.send(
      current.url,
      { ...signedHeaders(key, current.deliveryId, current.body, at) },
      current.body,
    );
    claim = await em.transactional(async (tx) => {
      const outcome = await recordAttempt(tx as EntityManager, current, result, at);
      outcomes.push(outcome);
      if (outcome !== 'delivered') return null;
      events += current.eventCount;
      if (Date.now() - started >= options.budgetMs) {
        more = true;
        return null;
      }
      return claimDelivery(tx as EntityManager, webhookId, leaseMs);
    });
  }
  return { attempts: outcomes.length, events, last: outcomes[outcomes.length - 1] ?? null, more };
}
