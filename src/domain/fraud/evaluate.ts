import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { executeBound, executeBoundInTransaction } from '../../db/bound-statement';
import type { RunBound } from '../../db/bound-transaction';
import { AppError } from '../../platform/errors';
import type { Statement } from '../../platform/named-sql';
import { currentSignals } from '../../platform/request-signals';
import { planFieldRead, type FieldValue, type FraudEvent, type FraudSignals } from './fields';
import { inCidr, type FraudListName } from './rules';
import { openOrExtendCase } from './cases';
import { fraudConfigWith, heldFraudConfig, type FraudConfig, type ReadWithStamp } from './rule-cache';
import { EVALUATION_AT_STAMP, EVALUATION_STORED, INSERT_EVALUATION, type EvaluationParams } from './fraud.queries';

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

interface Outcome {
  decision: FraudDecision;
  decidedBy: string;
  rule: { id: string; version: number } | null;
}

/** Allow lists, then block lists, then the enabled rules of the event by position, then `allow`: the first match decides. */
function decide(
  config: FraudConfig,
  event: FraudEvent,
  signals: FraudSignals,
  values: Record<string, FieldValue>,
  emailDomain: string | null,
): Outcome {
  const listed = listVerdict(config.lists, signals, emailDomain);
  if (listed) return { decision: listed.decision, decidedBy: listed.by, rule: null };
  const hit = (config.rules.get(event) ?? NO_RULES).rules.find((r) => r.matches(values));
  if (hit) return { decision: hit.action, decidedBy: 'rule', rule: { id: hit.id, version: hit.version } };
  return { decision: 'allow', decidedBy: 'default', rule: null };
}

/** What the evaluation read: the value of every field the event's rules read (stored with it), and the email domain. */
interface Read {
  values: Record<string, FieldValue>;
  emailDomain: string | null;
  /** The outcome, when the statement that read the stamp also stored the evaluation. */
  stored: Outcome | null;
}

function readOf(config: FraudConfig, event: FraudEvent, read: Record<string, FieldValue>, stored: Outcome | null = null): Read {
  const values: Record<string, FieldValue> = {};
  for (const field of (config.rules.get(event) ?? NO_RULES).fields) values[field] = read[field] ?? null;
  return { values, emailDomain: read[EMAIL_DOMAIN] as string | null, stored };
}

/**
 * Evaluates one event on the caller's transaction (`run`): allow lists, then block lists, then
 * the enabled rules of the event by position, then `allow`; the first match decides. The
 * evaluation is stored with what decided it (the rule and its version), the raw signals, and
 * the value of every field any enabled rule of the event reads, whether or not it decided, so
 * a later preview of another rule can replay it. A `review` opens or extends the customer's
 * case. The caller applies the outcome: a block throws fraudBlocked(), a review holds.
 *
 * `record` records the signals (recordSignal) in the statement that reads the stamp. When no
 * rule of the event reads the database (none at all, say), everything the decision needs is
 * known before that statement, so it stores the evaluation too: one statement in all.
 */
export async function evaluateFraudOn(
  run: RunBound,
  event: FraudEvent,
  signals: FraudSignals,
  reference: { type: string; id: string } | null = null,
  options: { record?: boolean } = {},
): Promise<FraudVerdict> {
  const evaluationId = randomUUID();
  const stored = (outcome: Outcome, values: Record<string, FieldValue>): EvaluationParams =>
    evaluationRow(evaluationId, event, signals, reference, outcome, values);
  // The fields' reads do not see the signal inserted by the same statement; they would not
  // count it anyway: a signal is recorded only with a customer, whose own rows the fields that
  // count signals leave out.
  const signal = options.record ? signalInsert(event, signals) : null;
  // Every field the rules read, and the email domain the lists check, in the statement that checks the stamp.
  const { config, read } = await fraudConfigWith(
    run,
    (held): ReadWithStamp<Read> => {
      const plan = fieldsOf(held, event, signals);
      if (plan.columns.length > 0)
        return { columns: plan.columns, values: plan.values, finish: (row) => readOf(held, event, plan.finish(row)) };
      const known = readOf(held, event, plan.finish(undefined));
      const outcome = decide(held, event, signals, known.values, known.emailDomain);
      // A block is written outside the transaction, below.
      if (outcome.decision === 'block') return { columns: [], values: [], finish: () => known };
      const insert = EVALUATION_AT_STAMP.bind({ ...stored(outcome, known.values), stamp: held.stamp });
      return {
        ctes: [insert.sql],
        columns: [`${EVALUATION_STORED} as fraud_stored`],
        values: insert.values,
        finish: (row) => ({ ...known, stored: row?.['fraud_stored'] === true ? outcome : null }),
      };
    },
    signal ? { ctes: [`fraud_signal as (${signal.sql})`], values: signal.values } : undefined,
  );
  const outcome = read.stored ?? decide(config, event, signals, read.values, read.emailDomain);
  if (!read.stored) {
    // A block rolls the action's transaction back: its evaluation is written outside it, so
    // every refusal stays explainable.
    const write: RunBound = outcome.decision === 'block' && outside ? (statement) => executeBound(outside!, statement) : run;
    await write(INSERT_EVALUATION.bind(stored(outcome, read.values)));
  }
  let caseId: string | null = null;
  if (outcome.decision === 'review' && signals.customerId)
    caseId = await openOrExtendCase(run, signals.customerId, { event, reason: REVIEW_REASON, evaluationId, reference });
  return { decision: outcome.decision, evaluationId, caseId };
}

/** Every field the event's rules read, and the email domain the lists check, as one read (planFieldRead). */
function fieldsOf(config: FraudConfig, event: FraudEvent, signals: FraudSignals) {
  return planFieldRead([...(config.rules.get(event) ?? NO_RULES).fields, EMAIL_DOMAIN], signals, { lists: config.lists });
}

/** The stored row of one evaluation. */
function evaluationRow(
  id: string,
  event: FraudEvent,
  signals: FraudSignals,
  reference: { type: string; id: string } | null,
  outcome: Outcome,
  values: Record<string, FieldValue>,
): EvaluationParams {
  return {
    id,
    event,
    customer_id: signals.customerId,
    decision: outcome.decision,
    decided_by: outcome.decidedBy,
    rule_id: outcome.rule?.id ?? null,
    rule_version: outcome.rule?.version ?? null,
    signals: JSON.stringify(signals),
    fields: JSON.stringify(values),
    reference_type: reference?.type ?? null,
    reference_id: reference?.id ?? null,
  };
}

/**
 * An `allow` decided before any statement, from this process's copy of the rules and lists, for
 * a caller that stores it within a statement of its own: `cte` (EVALUATION_AT_STAMP, the CTE
 * `fraud_evaluation`) goes first in that statement's WITH list and writes the evaluation only
 * while the stamp is still the copy's; EVALUATION_STORED says in that statement whether it did.
 * The caller makes what it writes on the strength of the allow depend on that condition, so
 * nothing is written on the decision of rules changed since, and when it was not stored
 * evaluates as usual (evaluateFraudOn).
 */
export interface AllowedAhead {
  evaluationId: string;
  cte: Statement;
}

/**
 * evaluateFraudOn's evaluation decided ahead (AllowedAhead), or null when it cannot be so: no
 * copy is held yet, a rule of the event reads the database, or the copy says other than allow
 * (a review opens its case first, and a block's evaluation is written outside the caller's
 * transaction, as evaluateFraudOn does both). Records no signal.
 */
export function allowedAhead(
  event: FraudEvent,
  signals: FraudSignals,
  reference: { type: string; id: string } | null = null,
): AllowedAhead | null {
  const held = heldFraudConfig();
  if (!held) return null;
  const plan = fieldsOf(held, event, signals);
  if (plan.columns.length > 0) return null;
  const known = readOf(held, event, plan.finish(undefined));
  const outcome = decide(held, event, signals, known.values, known.emailDomain);
  if (outcome.decision !== 'allow') return null;
  const evaluationId = randomUUID();
  const row = evaluationRow(evaluationId, event, signals, reference, outcome, known.values);
  return { evaluationId, cte: EVALUATION_AT_STAMP.bind({ ...row, stamp: held.stamp }) };
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
  const verdict = await evaluateFraudOn(run, event, full, reference, { record: true });
  if (verdict.decision === 'block') throw fraudBlocked();
  return verdict;
}

/** The insert of one event's signals, or null when there is nothing to record (no customer, or no address, device, instrument or destination). */
function signalInsert(event: string, s: FraudSignals): Statement | null {
  if (!s.customerId || !(s.ip || s.deviceId || s.instrument || s.destination)) return null;
  return {
    sql: `insert into fraud_signals (id, created_at, updated_at, customer_id, event, device_id, ip, instrument, destination)
          values (gen_random_uuid(), now(), now(), ?, ?, ?, ?, ?, ?)`,
    values: [s.customerId, event, s.deviceId ?? null, s.ip ?? null, s.instrument ?? null, s.destination ?? null],
  };
}

/** Records who was seen with which address, device, instrument or destination: the links between customers are read from these rows. */
export async function recordSignal(run: RunBound, event: string, s: FraudSignals): Promise<void> {
  const insert = signalInsert(event, s);
  if (insert) await run(insert);
}
