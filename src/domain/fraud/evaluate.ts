import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { executeBound, executeBoundInTransaction } from '../../db/bound-statement';
import type { RunBound } from '../../db/bound-transaction';
import { AppError } from '../../platform/errors';
import { currentSignals } from '../../platform/request-signals';
import { planFieldRead, type FieldValue, type FraudEvent, type FraudSignals } from './fields';
import { inCidr, type FraudListName } from './rules';
import { openOrExtendCase } from './cases';
import { fraudConfigWith } from './rule-cache';
import { INSERT_EVALUATION } from './fraud.queries';

let outside: EntityManager | null = null;

/** Gives the evaluation of blocks a connection of their own (see evaluateFraudOn); installed once at start-up. */
export function installFraudRecorder(em: EntityManager): void {
  outside = em;
}

export type FraudDecision = 'allow' | 'review' | 'block';

const NO_RULES = { rules: [], fields: [] } as const;
const EMAIL_DOMAIN = 'customer.email_domain';

export interface FraudVerdict {
  decision: FraudDecision;
  evaluationId: string;
  /** Set when the verdict is `review`: the case the review was added to. */
  caseId: string | null;
}

/** The one answer a blocked customer gets: it names no rule and no list, so a fraudster learns nothing to steer around. */
export const fraudBlocked = () =>
  new AppError(403, 'FRAUD_BLOCKED', 'This action cannot be completed. Contact support if you think this is a mistake.');

/** The generic reason a held action carries; staff read the evaluation for the detail. */
export const REVIEW_REASON = 'Held for a fraud review';

function listVerdict(
  all: ReadonlyMap<FraudListName, readonly string[]>,
  s: FraudSignals,
  emailDomain: string | null,
): { decision: FraudDecision; by: string } | null {
  const has = (name: FraudListName, v: string | null | undefined) => !!v && (all.get(name) ?? []).includes(v.toLowerCase());
  // Shared NAT (an office, a mobile carrier) is listed as allowed: its address then says nothing either way.
  if (has('allowed_ips', s.ip)) return { decision: 'allow', by: 'list:allowed_ips' };
  if (has('blocked_ips', s.ip)) return { decision: 'block', by: 'list:blocked_ips' };
  if (s.ip && (all.get('blocked_cidrs') ?? []).some((c) => inCidr(s.ip!, c)))
    return { decision: 'block', by: 'list:blocked_cidrs' };
  if (s.deviceId && (all.get('blocked_devices') ?? []).includes(s.deviceId))
    return { decision: 'block', by: 'list:blocked_devices' };
  if (has('blocked_countries', s.ipCountry) || has('blocked_countries', s.country))
    return { decision: 'block', by: 'list:blocked_countries' };
  if (has('blocked_email_domains', emailDomain)) return { decision: 'block', by: 'list:blocked_email_domains' };
  return null;
}

/**
 * Evaluates one event on the caller's transaction (`run`): allow lists, then block lists, then
 * the enabled rules of the event by position, then `allow`; the first match decides. The
 * evaluation is stored with what decided it (the rule and its version), the raw signals, and
 * the value of every field any enabled rule of the event reads, whether or not it decided, so
 * a later preview of another rule can replay it. A `review` opens or extends the customer's
 * case. The caller applies the outcome: a block throws fraudBlocked(), a review holds.
 */
export async function evaluateFraudOn(
  run: RunBound,
  event: FraudEvent,
  signals: FraudSignals,
  reference: { type: string; id: string } | null = null,
): Promise<FraudVerdict> {
  // Every field the rules read, and the email domain the lists check, in the statement that checks the stamp.
  const { config, read } = await fraudConfigWith(run, (held) =>
    planFieldRead([...(held.rules.get(event) ?? NO_RULES).fields, EMAIL_DOMAIN], signals, { lists: held.lists }),
  );
  const { rules, fields } = config.rules.get(event) ?? NO_RULES;
  const values: Record<string, FieldValue> = {};
  for (const field of fields) values[field] = read[field] ?? null;
  const emailDomain = read[EMAIL_DOMAIN] as string | null;
  let decision: FraudDecision = 'allow';
  let decidedBy = 'default';
  let rule: { id: string; version: number } | null = null;
  const listed = listVerdict(config.lists, signals, emailDomain);
  if (listed) ({ decision, by: decidedBy } = listed);
  else {
    const hit = rules.find((r) => r.matches(values));
    if (hit) {
      decision = hit.action;
      decidedBy = 'rule';
      rule = { id: hit.id, version: hit.version };
    }
  }
  const evaluationId = randomUUID();
  // A block rolls the action's transaction back: its evaluation is written outside it, so
  // every refusal stays explainable.
  const write: RunBound = decision === 'block' && outside ? (statement) => executeBound(outside!, statement) : run;
  await write(
    INSERT_EVALUATION.bind({
      id: evaluationId,
      event,
      customer_id: signals.customerId,
      decision,
      decided_by: decidedBy,
      rule_id: rule?.id ?? null,
      rule_version: rule?.version ?? null,
      signals: JSON.stringify(signals),
      fields: JSON.stringify(values),
      reference_type: reference?.type ?? null,
      reference_id: reference?.id ?? null,
    }),
  );
  let caseId: string | null = null;
  if (decision === 'review' && signals.customerId)
    caseId = await openOrExtendCase(run, signals.customerId, { event, reason: REVIEW_REASON, evaluationId, reference });
  return { decision, evaluationId, caseId };
}

/**
 * The one call for paths outside the posting hooks (sign-up, promo redeem, bonus grant, IB
 * accrual): evaluates in `em`'s transaction (call it inside the action's transaction), filling
 * the address and device id from the request in progress when the caller gives none. Throws
 * 403 FRAUD_BLOCKED on `block`; answers the verdict otherwise, and the caller holds the action
 * on `review`.
 */
export async function evaluateFraud(
  em: EntityManager,
  event: FraudEvent,
  signals: FraudSignals,
  reference: { type: string; id: string } | null = null,
): Promise<FraudVerdict> {
  // A staff change comes from the staff member's address and device: never the customer's signals.
  const request = event === 'verification_change' ? { ip: null, deviceId: null } : currentSignals();
  const full = { ...signals, ip: signals.ip ?? request.ip, deviceId: signals.deviceId ?? request.deviceId };
  const run: RunBound = (statement) => executeBoundInTransaction(em, statement);
  if (full.customerId) await recordSignal(run, event, full);
  const verdict = await evaluateFraudOn(run, event, full, reference);
  if (verdict.decision === 'block') throw fraudBlocked();
  return verdict;
}

/** Records who was seen with which address, device, instrument or destination: the links between customers are read from these rows. */
export async function recordSignal(run: RunBound, event: string, s: FraudSignals): Promise<void> {
  if (!s.customerId || !(s.ip || s.deviceId || s.instrument || s.destination)) return;
  await run({
    sql: `insert into fraud_signals (id, created_at, updated_at, customer_id, event, device_id, ip, instrument, destination)
          values (gen_random_uuid(), now(), now(), ?, ?, ?, ?, ?, ?)`,
    values: [s.customerId, event, s.deviceId ?? null, s.ip ?? null, s.instrument ?? null, s.destination ?? null],
  });
}
