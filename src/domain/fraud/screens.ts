import type { EntityManager } from '@mikro-orm/postgresql';
import { Customer } from '../../entities/customer.entity';
import { executeBoundInTransaction } from '../../db/bound-statement';
import type { RunBound } from '../../db/bound-transaction';
import type { StaffCaller } from '../../platform/caller';
import { openOrExtendCase } from './cases';
import { evaluateFraud, recordSignal, REVIEW_REASON, type FraudVerdict } from './evaluate';
import { ATTACH_EVALUATION, STAFF_EMAIL } from './fraud.queries';

/**
 * The fraud rules at a sign-up (POST /customers/register), before anything is kept: there is
 * no customer yet, so the rules see the email, the country, the address and the device. A
 * block throws 403 FRAUD_BLOCKED; a review answers the evaluation id, which the pending
 * registration keeps so its confirmation creates the customer `close_only` with a case.
 */
export async function screenSignup(
  em: EntityManager,
  who: { email: string; country: string; ip: string | null; deviceId: string | null },
): Promise<string | null> {
  const verdict = await em.transactional((tx) =>
    evaluateFraud(tx as EntityManager, 'signup', {
      customerId: null,
      email: who.email,
      country: who.country,
      ip: who.ip,
      deviceId: who.deviceId,
    }),
  );
  return verdict.decision === 'review' ? verdict.evaluationId : null;
}

/**
 * At the confirmation that creates the customer, in its transaction: the sign-up's address and
 * device become the customer's first signals (so later sign-ups on the device link to it), and
 * a sign-up held for review sets access `close_only`, attaches the evaluation and opens or
 * extends the customer's case.
 */
export async function holdSignup(
  tx: EntityManager,
  customer: Customer,
  signup: { ip: string | null; deviceId: string | null; reviewEvaluationId: string | null },
): Promise<void> {
  const run: RunBound = (s) => executeBoundInTransaction(tx, s);
  await recordSignal(run, 'signup', { customerId: customer.id, ip: signup.ip, deviceId: signup.deviceId });
  if (!signup.reviewEvaluationId) return;
  await run(ATTACH_EVALUATION.bind({ id: signup.reviewEvaluationId, customer_id: customer.id }));
  await openOrExtendCase(run, customer.id, {
    event: 'signup',
    reason: REVIEW_REASON,
    evaluationId: signup.reviewEvaluationId,
    reference: { type: 'customer', id: customer.id },
  });
}

/**
 * A staff change of a customer's verification level, in the change's transaction: the
 * `verification_change` rules see who changed it (`staff.excepted`: on the
 * `verification_exceptions` list or not) and the levels before and after. A review opens or
 * extends the customer's case and lets the change stand (a block refuses it, 403).
 */
export async function screenVerificationChange(
  tx: EntityManager,
  actor: StaffCaller,
  customerId: string,
  change: { from: number; to: number },
): Promise<FraudVerdict> {
  const [staff] = await executeBoundInTransaction<{ email: string }>(tx, STAFF_EMAIL.bind({ id: actor.userId }));
  const verdict = await evaluateFraud(
    tx,
    'verification_change',
    {
      customerId,
      staff: { id: actor.userId, email: staff?.email ?? '' },
      levelFrom: change.from,
      levelTo: change.to,
    },
    { type: 'customer', id: customerId },
  );
  return verdict;
}
