import { createHash } from 'node:crypto';
import { dec } from '../../platform/decimal';
import { AppError } from '../../platform/errors';
import { currentSignals } from '../../platform/request-signals';
import type { RunBound } from '../../db/bound-transaction';
import type { Posting, PostingHook } from '../ledger/posting';
import { evaluateFraudOn, fraudBlocked, REVIEW_REASON, type FraudDecision } from './evaluate';
import { openOrExtendCase } from './cases';

/**
 * Where a withdrawal goes, as a fingerprint: the payment data with its keys sorted, its text
 * lower-cased and stripped of spaces and separators (an IBAN typed with or without spaces is
 * one destination), hashed. The raw data never leaves the withdrawal record.
 */
export function destinationFingerprint(paymentData: unknown): string | null {
  if (!paymentData || typeof paymentData !== 'object') return null;
  const norm = (v: unknown): unknown =>
    typeof v === 'string'
      ? v.toLowerCase().replace(/[\s\-_.]/g, '')
      : Array.isArray(v)
        ? v.map(norm)
        : v && typeof v === 'object'
          ? Object.fromEntries(
              Object.keys(v)
                .sort()
                .map((k) => [k.toLowerCase(), norm((v as Record<string, unknown>)[k])]),
            )
          : v;
  return createHash('sha256')
    .update(JSON.stringify(norm(paymentData)))
    .digest('hex');
}

/** The customer's email and country: as the locking statement read them when it did, else read here. */
async function customerOf(run: RunBound, posting: Posting): Promise<{ email: string; country: string | null } | undefined> {
  if (posting.account.customer !== undefined) return posting.account.customer ?? undefined;
  if (!posting.account.customerId) return undefined;
  const [row] = await run<{ email: string; country: string | null }>({
    sql: 'select email, country from customers where id = ?',
    values: [posting.account.customerId],
  });
  return row;
}

/**
 * The decision on a withdrawal, by posting, from the `before` that made it to the `after` that
 * holds a review: a withdrawal let through pays no statement to find out. A path that hands the
 * `after` another object than its `before` had is looked up in the stored evaluations instead.
 */
const decided = new WeakMap<Posting, FraudDecision>();

/**
 * The fraud rules on withdrawals and transfers out, run once the account is locked and before
 * anything is reserved or booked: a block refuses the request (nothing written), a review lets
 * a withdrawal be recorded and then holds it (`review_reason`, and a case), and opens a case for
 * a transfer, which completes (a transfer between one's own accounts takes no money out).
 */
export const FraudPostingHook: PostingHook = {
  name: 'fraud_rules',
  flows: ['withdrawal', 'transfer_out'],
  async before(run, posting) {
    const customerId = posting.account.customerId;
    if (!customerId) return;
    const customer = await customerOf(run, posting);
    const request = currentSignals();
    const event = posting.flow === 'withdrawal' ? 'withdrawal' : 'transfer';
    const signals = {
      customerId,
      amount: posting.amount,
      currency: posting.account.currency,
      ip: request.ip,
      deviceId: request.deviceId,
      email: customer?.email ?? null,
      country: customer?.country ?? null,
      destination: event === 'withdrawal' ? destinationFingerprint(posting.request?.['payment_data']) : null,
    };
    const verdict = await evaluateFraudOn(run, event, signals, posting.reference, { record: true });
    if (verdict.decision === 'block') throw fraudBlocked();
    if (posting.flow === 'withdrawal') decided.set(posting, verdict.decision);
  },
  async after(run, posting) {
    if (posting.flow !== 'withdrawal') return;
    const decision = decided.get(posting);
    if (decision === undefined)
      await run({
        sql: `update withdrawals set review_reason = ? where id = ?::uuid and exists
                (select 1 from fraud_evaluations where reference_id = ? and decision = 'review')`,
        values: [REVIEW_REASON, posting.reference.id, posting.reference.id],
      });
    else if (decision === 'review')
      await run({
        sql: `update withdrawals set review_reason = ? where id = ?::uuid`,
        values: [REVIEW_REASON, posting.reference.id],
      });
  },
};

const restricted = () =>
  new AppError(
    403,
    'ACCESS_RESTRICTED',
    'Your account may close positions and withdraw funds only. Contact support for details.',
  );

/**
 * A customer set to `close_only` (or `no_login`, whose tokens are already revoked) opens
 * nothing new and moves nothing out but by withdrawal: new orders, transfers out and payouts
 * are refused before anything is booked.
 */
export const CustomerAccessHook: PostingHook = {
  name: 'customer_access',
  flows: ['order_open', 'transfer_out', 'payout'],
  async before(run, posting) {
    if (!posting.account.customerId) return;
    // A path whose locking statement read the customer has its access already: no round trip.
    const customer =
      posting.account.customer !== undefined
        ? posting.account.customer
        : (
            await run<{ access: string }>({
              sql: 'select access from customers where id = ?',
              values: [posting.account.customerId],
            })
          )[0];
    if (customer && customer.access !== 'full') throw restricted();
  },
};

/**
 * A charge-back or refund that leaves a wallet below zero opens (or extends) a fraud case on its
 * customer, in the reversal's transaction.
 */
export const ReversalCaseHook: PostingHook = {
  name: 'fraud_reversal_case',
  flows: ['deposit_reversal'],
  async after(run, posting) {
    const customerId = posting.account.customerId;
    if (!customerId || posting.account.kind !== 'wallet') return;
    const [row] = await run<{ balance: string }>({
      sql: 'select balance::text as balance from accounts where id = ?',
      values: [posting.account.id],
    });
    if (!row || dec(row.balance).gte(0)) return;
    await openOrExtendCase(run, customerId, {
      event: 'deposit',
      reason: 'A deposit reversal took the wallet below zero',
      evaluationId: null,
      reference: posting.reference,
    });
  },
};
