import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { executeBoundInTransaction, executeNamed } from '../../db/bound-statement';
import type { RunBound } from '../../db/bound-transaction';
import type { StaffCaller } from '../../platform/caller';
import { dec, type Dec } from '../../platform/decimal';
import { WALLET_CURRENCY } from '../accounts/accounts';
import { auditFields, auditParams, recordAudit } from '../audit/audit';
import {
  AUDIT_ROW,
  DAILY_DUE,
  DUE_OF_PARTNERS,
  HELD_OF_CUSTOMER,
  INSERT_PAYMENTS,
  MARK_PAID,
  PAID_SINCE,
  REVERSE_REWARD,
  SET_ACCRUAL_STATUS,
} from './partners.queries';
import { instantPayment, payRewards } from './reward-payment';

/**
 * Moving partner rewards after their accrual: the end of day's daily payment, the release or
 * voiding of held accruals when a fraud case resolves, and the clawback of a customer's rewards.
 */

/** How many partners the daily payment pays per transaction unless told. */
export const DAILY_PAYMENT_BATCH = 250;

interface DueRow {
  partner_id: string;
  customer_id: string;
  has_wallet: boolean;
}

/**
 * Pays, for one trading date, each partner everything its daily plan accrued and has not been
 * paid yet, up to the payment itself: one `ib_reward` row per partner and date (an order closed
 * after the date's rollover but before its run is paid with that date, rather than a day
 * later; either way once). The payment row is unique on (partner, date), so a second run of
 * the date pays nothing. Partners are paid in batches of `batch`, each batch in a transaction
 * of its own and in a few statements whatever its size: a worker killed half-way leaves the
 * batches it committed paid and the others owed, and a partner without a wallet holds no one
 * else's payment.
 */
export async function payDailyRewards(
  em: EntityManager,
  rollover: { tradingDate: string; cutoffAt: Date },
  batch = DAILY_PAYMENT_BATCH,
): Promise<number> {
  const until = new Date(Math.max(Date.now(), rollover.cutoffAt.getTime()));
  const due = await executeNamed<DueRow>(em, DAILY_DUE.bind({ until, trading_date: rollover.tradingDate }));
  const failed = due.filter((p) => !p.has_wallet).map((p) => `${p.partner_id}: no wallet to be paid into`);
  const payable = due.filter((p) => p.has_wallet);
  let paid = 0;
  for (let i = 0; i < payable.length; i += batch) {
    const part = payable.slice(i, i + batch);
    paid += await em
      .fork()
      .transactional((tx) => payBatch((s) => executeBoundInTransaction(tx, s), part, rollover.tradingDate, until))
      .catch((err: unknown) => {
        failed.push(`${part.length} partners from ${part[0]!.partner_id}: ${err instanceof Error ? err.message : String(err)}`);
        return 0;
      });
  }
  // The others are paid; a retry of the finishing job pays the ones that failed, and no one twice.
  if (failed.length) throw new Error(`${failed.length} partner payment(s) failed: ${failed.join('; ').slice(0, 400)}`);
  return paid;
}

/** One batch of the daily payment, in the caller's transaction: answers the partners paid. */
async function payBatch(run: RunBound, part: readonly DueRow[], tradingDate: string, until: Date): Promise<number> {
  const rows = await run<{ id: string; partner_id: string; amount: string }>(
    DUE_OF_PARTNERS.bind({ partner_ids: JSON.stringify(part.map((p) => p.partner_id)), until }),
  );
  const owed = new Map<string, { total: Dec; ids: string[] }>();
  for (const r of rows) {
    const o = owed.get(r.partner_id) ?? { total: dec(0), ids: [] };
    o.total = o.total.plus(r.amount);
    o.ids.push(r.id);
    owed.set(r.partner_id, o);
  }
  if (owed.size === 0) return 0;
  const payments = await run<{ id: string; partner_id: string }>(
    INSERT_PAYMENTS.bind({
      trading_date: tradingDate,
      rows: JSON.stringify([...owed].map(([partner_id, o]) => ({ partner_id, amount: o.total.toFixed(2), n: o.ids.length }))),
    }),
  );
  if (payments.length === 0) return 0;
  const customerOf = new Map(part.map((p) => [p.partner_id, p.customer_id]));
  const paymentOf = new Map(payments.map((p) => [p.partner_id, p]));
  // In the batch's order (deepest in the tree first), which is the order the wallets are locked in.
  const toPay = part
    .map((p) => paymentOf.get(p.partner_id))
    .filter((p): p is { id: string; partner_id: string } => !!p && owed.get(p.partner_id)!.total.gt(0));
  const booked = await payRewards(
    run,
    'daily',
    toPay.map((p) => {
      const o = owed.get(p.partner_id)!;
      const amount = o.total.toFixed(2);
      return {
        customerId: customerOf.get(p.partner_id)!,
        partnerId: p.partner_id,
        amount,
        referenceId: p.id,
        comment: `IB rewards of ${tradingDate}`,
        data: JSON.stringify({
          partner_id: p.partner_id,
          payment_id: p.id,
          trading_date: tradingDate,
          amount,
          currency: WALLET_CURRENCY,
          accruals: o.ids.length,
        }),
        accrualIds: o.ids,
        paymentId: p.id,
      };
    }),
  );
  // A wallet gone since the partners were read: the batch's payment rows roll back with this, and its accruals stay owed.
  const missed = toPay.filter((p) => !booked.has(p.partner_id));
  if (missed.length) throw new Error(`partner ${missed[0]!.partner_id} has no wallet to be paid into`);
  // Nothing to book (owed 0 in all): the accruals are settled by the payment alone.
  for (const p of payments.filter((x) => !owed.get(x.partner_id)!.total.gt(0)))
    await run(MARK_PAID.bind({ ids: JSON.stringify(owed.get(p.partner_id)!.ids), payment_id: p.id }));
  return payments.length;
}

interface HeldRow {
  id: string;
  partner_id: string;
  partner_customer_id: string;
  amount: string;
  charge: string;
  ticket: string;
}

/**
 * When a case about a customer resolves: its held accruals (of its orders, or of it as a
 * partner) are released when the verdict is legitimate or staff release the holds, and voided
 * otherwise. A released instant accrual is paid at once; a daily one waits for the end of day.
 */
export async function settleHolds(tx: EntityManager, customerId: string, release: boolean, actor: StaffCaller): Promise<number> {
  const run: RunBound = (s) => executeBoundInTransaction(tx, s);
  const held = await run<HeldRow>(HELD_OF_CUSTOMER.bind({ customer_id: customerId }));
  if (held.length === 0) return 0;
  if (!release) {
    await run(SET_ACCRUAL_STATUS.bind({ ids: JSON.stringify(held.map((h) => h.id)), status: 'void', reason: 'fraud_case' }));
  } else {
    await run(SET_ACCRUAL_STATUS.bind({ ids: JSON.stringify(held.map((h) => h.id)), status: 'accrued', reason: null }));
    await payRewards(
      run,
      'instant',
      held
        .filter((x) => x.charge === 'instant' && dec(x.amount).gt(0))
        .map((h) =>
          instantPayment({
            customerId: h.partner_customer_id,
            partnerId: h.partner_id,
            amount: dec(h.amount).toFixed(2),
            currency: WALLET_CURRENCY,
            ticket: h.ticket,
            accrualId: h.id,
            comment: `IB reward released, order ${h.ticket}`,
          }),
        ),
    );
  }
  recordAudit(tx, actor, {
    action: release ? 'ib_accruals.released' : 'ib_accruals.voided',
    entityType: 'customer',
    entityId: customerId,
    after: { accruals: held.map((h) => h.id) },
  });
  return held.length;
}

/**
 * Takes back the rewards a customer's orders earned since `since`: paid ones with an
 * `ib_reward_reversal` row per partner (its wallet may go below zero, which blocks its
 * withdrawals), unpaid ones are voided. Audited; `ib.reward_reversed` per partner.
 */
export async function clawBackRewards(
  run: RunBound,
  actor: StaffCaller | 'system',
  customerId: string,
  since: Date,
  why: { type: string; id: string },
): Promise<{ reversed: string; accruals: number }> {
  const rows = await run<{ id: string; partner_id: string; partner_customer_id: string; amount: string; status: string }>(
    PAID_SINCE.bind({ customer_id: customerId, since }),
  );
  if (rows.length === 0) return { reversed: '0.00', accruals: 0 };
  let reversed = dec(0);
  // Paid rewards are taken back from the wallet; ones not paid yet (daily, or held) just end.
  const byPartner = new Map<string, { customer: string; amount: Dec; ids: string[] }>();
  for (const r of rows) {
    const p = byPartner.get(r.partner_id) ?? { customer: r.partner_customer_id, amount: dec(0), ids: [] };
    p.ids.push(r.id);
    if (r.status === 'paid') p.amount = p.amount.plus(r.amount);
    byPartner.set(r.partner_id, p);
  }
  for (const [partnerId, p] of byPartner) {
    if (p.amount.gt(0)) {
      await run(
        REVERSE_REWARD.bind({
          customer_id: p.customer,
          partner_id: partnerId,
          amount: p.amount.toFixed(2),
          reference_id: `${why.type}:${why.id}`.slice(0, 255),
          comment: `IB rewards reversed (${why.type})`,
          data: JSON.stringify({
            partner_id: partnerId,
            client_customer_id: customerId,
            amount: p.amount.toFixed(2),
            currency: WALLET_CURRENCY,
            accruals: p.ids.length,
            since: since.toISOString(),
            reason: why.type,
          }),
        }),
      );
      reversed = reversed.plus(p.amount);
    }
    await run(SET_ACCRUAL_STATUS.bind({ ids: JSON.stringify(p.ids), status: 'reversed', reason: why.type }));
  }
  const audit = auditFields(actor, {
    action: 'ib_rewards.reversed',
    entityType: 'customer',
    entityId: customerId,
    after: {
      since: since.toISOString(),
      reversed: reversed.toFixed(2),
      accruals: rows.length,
      reason: why.type,
      reference: why.id,
    },
  });
  await run(AUDIT_ROW.bind(auditParams(randomUUID(), audit)));
  return { reversed: reversed.toFixed(2), accruals: rows.length };
}
