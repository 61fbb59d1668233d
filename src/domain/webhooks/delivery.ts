import { randomUUID } from 'node:crypto';
import { executeBound, executeNamed } from '../../db/bound-statement';
import {
  DELIVERY_STEPS,
  DISABLE_WEBHOOK,
  FINISH_ATTEMPT,
  MARK_FAILING,
  PREVIOUS_SECRET,
  RECORD_ATTEMPTS,
} from './webhooks.queries';
import type { EntityManager } from '@mikro-orm/postgresql';
import { UnsealError, type SecretBox } from '../../platform/secret-box';
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

interface StepRow {
  delivery_id: string;
  endpoint_url: string;
  secret_sealed: string;
  failing: boolean;
  attempts: number;
  n: number;
  body: string;
}

/** A successful attempt to record with the next call. */
interface Success {
  claim: Claim;
  result: SendResult;
  startedAt: Date;
}

/**
 * Deliveries claimed per call while the endpoint keeps answering: one statement records a
 * run of successful attempts and claims the next run, so the bookkeeping of a busy webhook
 * costs a round trip per this many requests, not one per request.
 */
export const CLAIM_AHEAD = 32;
/** Margin of a lease over the attempt timeout: a claimed delivery is only started while the lease still covers its whole timeout. */
const LEASE_MARGIN_MS = 5000;

/**
 * One call of `webhook_delivery_steps` (src/db/functions/webhook_delivery_steps.sql): records
 * the successful attempts given, hands back the claimed deliveries not attempted, then, when
 * `claim` > 0, takes the webhook's next attempts, if any are due and nobody else holds the
 * webhook: the oldest open delivery alone (ordered by its first event), or else up to `claim`
 * new deliveries of the next events past its cursor, at most batch_size_max each. With `held`
 * (the caller's own deliveries, still being sent) it takes only new deliveries, behind them. One statement, under the
 * webhook's row lock, so two workers never build two batches of one webhook or hold one
 * delivery at once; the lease (timeout plus a margin) is what another worker waits out after a
 * crash. A webhook is served strictly one delivery at a time, in event order: an account's
 * events arrive in the order they were written, and a later batch never overtakes one being
 * retried.
 */
async function steps(
  em: EntityManager,
  webhookId: string,
  leaseMs: number,
  claim: number,
  done: Success[] = [],
  release: Claim[] = [],
  held: Claim[] = [],
): Promise<Claim[]> {
  // Values as parameters (executeBound): em.execute would quote every body of `done` into the text.
  const rows = await executeBound<StepRow>(
    em,
    DELIVERY_STEPS.bind({
      webhook_id: webhookId,
      lease_ms: leaseMs,
      claim,
      done: JSON.stringify(done.map((s) => attemptRow(s.claim, s.result, s.startedAt))),
      release: JSON.stringify(release.map((c) => c.deliveryId)),
      clear_failing: done.some((s) => s.claim.failing),
      held: JSON.stringify(held.map((c) => c.deliveryId)),
    }),
  );
  return rows.map((row) => ({
    deliveryId: row.delivery_id,
    webhookId,
    url: row.endpoint_url,
    secretSealed: row.secret_sealed,
    attemptsInRound: row.attempts,
    eventCount: row.n,
    // Postgres writes JSON with spaces (`"events" : [`); the receiver gets it compact, the
    // fields in the order they were stored (the REST view's), and the signature covers these bytes.
    body: JSON.stringify(JSON.parse(row.body)),
    failing: row.failing,
  }));
}

/** The next attempt of one webhook, or null when none is due or another worker holds it. */
export async function claimDelivery(em: EntityManager, webhookId: string, leaseMs: number): Promise<Claim | null> {
  const [claim, ...rest] = await steps(em, webhookId, leaseMs, 1);
  if (rest.length) throw new Error('claimed more than asked');
  return claim ?? null;
}

export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'disabled';

/** One attempt as webhook_attempts_record takes it: the same shape for a success and a failure. */
function attemptRow(claim: Claim, result: SendResult, startedAt: Date) {
  return {
    id: claim.deliveryId,
    attempt_id: randomUUID(),
    started_at: startedAt.toISOString(),
    duration_ms: result.durationMs,
    status_code: result.statusCode,
    error: result.error,
    response_body: result.responseBody,
  };
}

/** Records a failed attempt and decides what follows it (retry, give up, disable), in the caller's transaction. */
export async function recordFailure(
  tx: EntityManager,
  claim: Claim,
  result: SendResult,
  startedAt: Date,
  now = new Date(),
): Promise<Exclude<AttemptOutcome, 'delivered'>> {
  await executeNamed(tx, RECORD_ATTEMPTS.bind({ attempts: JSON.stringify([attemptRow(claim, result, startedAt)]) }));
  const finish = (status: 'failed' | 'pending', nextAt?: Date) =>
    executeNamed(tx, FINISH_ATTEMPT.bind({ status, next_attempt_at: nextAt ?? null, delivery_id: claim.deliveryId }));
  if (result.statusCode === 410) {
    await finish('failed');
    await disableWebhook(tx, claim.webhookId, 'The endpoint answered 410 Gone');
    return 'disabled';
  }
  const [webhook] = await executeNamed<{ failing_since: Date }>(tx, MARK_FAILING.bind({ now, webhook_id: claim.webhookId }));
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
  const [row] = await executeNamed<{ endpoint_url: string; affiliate_id: string | null }>(
    tx,
    DISABLE_WEBHOOK.bind({ reason, webhook_id: webhookId }),
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
 * spent (`more`: the caller queues a continuation, behind other webhooks' jobs). It claims up
 * to CLAIM_AHEAD deliveries at a time; while it sends a run, one statement records the
 * previous run's successes and claims the run behind this one (held: sent only after it), so
 * the database's work overlaps the requests instead of sitting between them. Requests still go
 * out one at a time, in event order. A failure is recorded once the statement in flight has
 * answered, and everything claimed behind the failed delivery is handed back unsent. A slow
 * endpoint holds the slot for at most one timeout per attempt.
 */
export async function deliverWebhook(em: EntityManager, webhookId: string, options: DeliverOptions) {
  const started = Date.now();
  const leaseMs = options.timeoutMs + LEASE_MARGIN_MS;
  const outcomes: AttemptOutcome[] = [];
  let events = 0;
  let more = false;
  let claimedAt = Date.now();
  let claims = await steps(em, webhookId, leaseMs, CLAIM_AHEAD);
  // Successful attempts not recorded yet: they go with the next statement.
  let unrecorded: Success[] = [];
  // Read once per turn: a rotation's old secret signs beside the new one while it is valid.
  const previous = claims.length
    ? ((await executeNamed<{ previous_secret_sealed: string }>(em, PREVIOUS_SECRET.bind({ webhook_id: webhookId })))[0]
        ?.previous_secret_sealed ?? null)
    : null;
  while (claims.length) {
    // One webhook, one set of secrets: opened once per claim.
    let keys: Buffer[];
    try {
      keys = await openKeys(em, claims[0]!, previous, options);
    } catch (err) {
      await steps(em, webhookId, leaseMs, 0, unrecorded, claims.slice(1));
      throw err;
    }
    let ahead: Promise<Claim[]> | undefined;
    let aheadAt = 0;
    if (Date.now() - started < options.budgetMs) {
      aheadAt = Date.now();
      ahead = steps(em, webhookId, leaseMs, CLAIM_AHEAD, unrecorded, [], claims);
      // Awaited after the sends; this only keeps a failure meanwhile from counting as unhandled.
      ahead.catch(() => undefined);
      unrecorded = [];
    }
    const done: Success[] = [];
    let failure: { claim: Claim; result: SendResult; at: Date } | undefined;
    for (const current of claims) {
      // The lease must still cover this attempt's whole timeout, or another worker could take the delivery mid-attempt.
      if (Date.now() - claimedAt > LEASE_MARGIN_MS) break;
      const at = new Date();
      const result = await options.sender.send(
        current.url,
        { ...signedHeaders(keys, current.deliveryId, current.body, at) },
        current.body,
      );
      if (!result.ok) {
        failure = { claim: current, result, at };
        break;
      }
      outcomes.push('delivered');
      events += current.eventCount;
      done.push({ claim: current, result, startedAt: at });
    }
    // If this statement fails, what it carried stays leased and unrecorded: as after a crash, the leases lapse and the attempts are made again.
    const behind = ahead ? await ahead : [];
    if (failure) {
      const { claim, result, at } = failure;
      outcomes.push(await em.transactional((tx) => recordFailure(tx as EntityManager, claim, result, at)));
    }
    unrecorded.push(...done);
    const unsent = claims.slice(done.length + (failure ? 1 : 0));
    more = !failure && Date.now() - started >= options.budgetMs;
    if (!failure && !more && !unsent.length && behind.length) {
      claims = behind;
      claimedAt = aheadAt;
      continue;
    }
    // Recording the successes, handing back what was not sent (and what was claimed behind it), and claiming the next run: one statement.
    claimedAt = Date.now();
    claims = await steps(em, webhookId, leaseMs, failure || more ? 0 : CLAIM_AHEAD, unrecorded, [...unsent, ...behind]);
    unrecorded = [];
  }
  return { attempts: outcomes.length, events, last: outcomes[outcomes.length - 1] ?? null, more };
}

/**
 * The signing keys of a claimed webhook (its secret, and the one a rotation replaced while it
 * still signs). When a secret cannot be opened nothing is sent: the
 * first claimed delivery records the failed attempt (the delivery says why it waits, and its
 * schedule still gives up in the end), the rest go back unsent, and the caller's job fails loudly.
 */
async function openKeys(em: EntityManager, claim: Claim, previous: string | null, options: DeliverOptions): Promise<Buffer[]> {
  const at = new Date();
  try {
    const keys = [signingKey(options.secrets.open(claim.secretSealed, `the signing secret of webhook ${claim.webhookId}`))];
    if (previous)
      keys.push(signingKey(options.secrets.open(previous, `the previous signing secret of webhook ${claim.webhookId}`)));
    return keys;
  } catch (err) {
    if (err instanceof UnsealError) {
      const failed = { ok: false, statusCode: null, durationMs: 0, error: err.message, responseBody: null };
      await em.transactional((tx) => recordFailure(tx as EntityManager, claim, failed, at));
    }
    throw err;
  }
}
