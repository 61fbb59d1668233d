import type { EntityManager } from '@mikro-orm/postgresql';
import { executeBoundInTransaction } from '../../db/bound-statement';
import type { RunBound } from '../../db/bound-transaction';
import type { FraudCase } from '../../entities/fraud.entity';
import type { StaffCaller } from '../../platform/caller';
import type { HoldOutcome } from '../fraud/cases';
import type { PostingHook } from '../ledger/posting';
import { clawBackRewards, settleHolds } from './payouts';
import { CHARGED_BACK_DEPOSIT, CUSTOMER_SINCE } from './partners.queries';

/**
 * The partner programmes' policy beyond the close (composed in src/policy.ts): what a
 * charge-back and the end of a fraud case do to the rewards a customer's orders earned.
 */

/**
 * A deposit charged back takes back the rewards the customer's orders earned since that
 * deposit was booked (a refund does not: the customer asked for its money, nobody cheated).
 */
export const IbChargebackHook: PostingHook = {
  name: 'ib_chargeback',
  flows: ['deposit_reversal'],
  async after(run, posting) {
    if (!posting.account.customerId) return;
    const [row] = await run<{ charged_back: boolean | null; deposited_at: Date | null }>(
      CHARGED_BACK_DEPOSIT.bind({ reference_id: posting.reference.id }),
    );
    if (!row?.charged_back) return;
    await clawBackRewards(run, 'system', posting.account.customerId, new Date(row.deposited_at ?? 0), {
      type: 'chargeback',
      id: posting.reference.id,
    });
  },
};

/** `clawback_ib` on a resolved case: every reward the customer's orders earned is taken back. */
export async function clawBackForCase(tx: EntityManager, fraudCase: FraudCase, actor: StaffCaller): Promise<void> {
  const run: RunBound = (s) => executeBoundInTransaction(tx, s);
  const [customer] = await run<{ created_at: Date }>(CUSTOMER_SINCE.bind({ customer_id: fraudCase.customerId }));
  await clawBackRewards(run, actor, fraudCase.customerId, new Date(customer?.created_at ?? 0), {
    type: 'fraud_case',
    id: fraudCase.id,
  });
}

/**
 * The accruals held while the case was live (of the customer's orders, or of the customer as a
 * partner): released by `release_holds`, voided by a `fraud` verdict without it. A clawback of
 * the same resolution has already ended those of the customer's orders.
 */
export async function settleHoldsOfCase(
  tx: EntityManager,
  fraudCase: FraudCase,
  outcome: HoldOutcome,
  actor: StaffCaller,
): Promise<void> {
  await settleHolds(tx, fraudCase.customerId, outcome === 'release', actor);
}
