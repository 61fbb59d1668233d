import type { RunBound } from '../../db/bound-transaction';
import { PAY_DAILY, PAY_INSTANT } from './partners.queries';

/** One partner's payment: what it is paid, for which accruals, and how its ledger row and event read. */
export interface RewardPayment {
  customerId: string;
  partnerId: string;
  /** Decimal text, above zero. */
  amount: string;
  /** The order (instant) or the daily payment the ledger row references. */
  referenceId: string;
  comment: string;
  /** `ib.reward_paid`'s data as JSON text, without the wallet's login (the statement adds it). */
  data: string;
  accrualIds: readonly string[];
  paymentId: string | null;
}

/**
 * An instant payment of one accrual of an order: its ledger row references the order, and
 * `ib.reward_paid` names the order and counts the one accrual.
 */
export function instantPayment(p: {
  customerId: string;
  partnerId: string;
  amount: string;
  currency: string;
  ticket: string;
  accrualId: string;
  comment: string;
}): RewardPayment {
  return {
    customerId: p.customerId,
    partnerId: p.partnerId,
    amount: p.amount,
    referenceId: p.ticket,
    comment: p.comment,
    data: JSON.stringify({ partner_id: p.partnerId, amount: p.amount, currency: p.currency, accruals: 1, ticket: p.ticket }),
    accrualIds: [p.accrualId],
    paymentId: null,
  };
}

/**
 * Pays rewards in as few statements as can be: a statement pays each wallet at most once, so a
 * customer met again starts the next one. Answers the partners paid (one without a wallet is
 * not, and its accruals stay owed). The payments are made in the order given.
 */
export async function payRewards(
  run: RunBound,
  kind: 'instant' | 'daily',
  payments: readonly RewardPayment[],
): Promise<Set<string>> {
  const paid = new Set<string>();
  let chunk: RewardPayment[] = [];
  const flush = async () => {
    if (chunk.length === 0) return;
    const rows = chunk.map((p, n) => ({
      n,
      customer_id: p.customerId,
      partner_id: p.partnerId,
      amount: p.amount,
      reference_id: p.referenceId,
      comment: p.comment,
      data: p.data,
      accruals: p.accrualIds,
      payment_id: p.paymentId,
    }));
    const statement = (kind === 'instant' ? PAY_INSTANT : PAY_DAILY).bind({ rows: JSON.stringify(rows) });
    for (const r of await run<{ partner_id: string }>(statement)) paid.add(r.partner_id);
    chunk = [];
  };
  for (const p of payments) {
    if (chunk.some((c) => c.customerId === p.customerId)) await flush();
    chunk.push(p);
  }
  await flush();
  return paid;
}
