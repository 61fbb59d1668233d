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
  DUE_OF_PARTNER,
  HELD_OF_CUSTOMER,
  INSERT_PAYMENT,
  MARK_PAID,
  PAID_SINCE,
  PAY_DAILY,
  PAY_INSTANT,
  REVERSE_REWARD,
  SET_ACCRUAL_STATUS,
} from './partners.queries';

/**
 * Moving partner rewards after their accrual: the end of day's daily payment, the release or
 * voiding of held accruals when a fraud case resolves, and the clawback of a customer's rewards.
 */

/**
 * Pays, for one trading date, each partner everything its daily plan accrued and has not been
 * paid yet, up to the payment itself: one `ib_reward` row per partner and date (an order closed
 * after the date's rollover but before its run is paid with that date, rather than a day
 * later; either way once). The payment row is unique on (partner, date), so a second run of
 * the date pays nothing; each partner is paid in its own transaction, so one partner's failure
 * does not hold the others.
 */
export async function payDailyRewards(em: EntityManager, rollover: { tradingDate: string; cutoffAt: Date }): Promise<number> {
  const until = new Date(Math.max(Date.now(), rollover.cutoffAt.getTime()));
  const due = await executeNamed<{ partner_id: string; customer_id: string }>(
    em,
    DAILY_DUE.bind({ until, trading_date: rollover.tradingDate }),
  );
  let paid = 0;
  const failed: string[] = [];
  for (const p of due) {
    const booked = await em
      .fork()
      .transactional(async (tx) => {
        const run: RunBound = (s) => executeBoundInTransaction(tx, s);
        const rows = await run<{ id: string; amount: string }>(DUE_OF_PARTNER.bind({ partner_id: p.partner_id, until }));
        if (rows.length === 0) return false;
        const total = rows.reduce((s, r) => s.plus(r.amount), dec(0));
        const [payment] = await run<{ id: string }>(
          INSERT_PAYMENT.bind({
            partner_id: p.partner_id,
            trading_date: rollover.tradingDate,
            amount: total.toFixed(2),
            n: rows.length,
          }),
        );
        if (!payment) return false;
        if (total.gt(0)) {
          const booked = await run(
            PAY_DAILY.bind({
              customer_id: p.customer_id,
              partner_id: p.partner_id,
              amount: total.toFixed(2),
              reference_id: payment.id,
              comment: `IB rewards of ${rollover.tradingDate}`,
              data: JSON.stringify({
                partner_id: p.partner_id,
                payment_id: payment.id,
                trading_date: rollover.tradingDate,
                amount: total.toFixed(2),
                currency: WALLET_CURRENCY,
                accruals: rows.length,
              }),
            }),
          );
          // No wallet to pay into: the payment row rolls back with this, and the accruals stay owed.
          if (booked.length === 0) throw new Error(`partner ${p.partner_id} has no wallet to be paid into`);
        }
        await run(MARK_PAID.bind({ ids: JSON.stringify(rows.map((r) => r.id)), payment_id: payment.id }));
        return true;
      })
      .catch((err: unknown) => {
        failed.push(`${p.partner_id}: ${err instanceof Error ? err.message : String(err)}`);
        return false;
      });
    if (booked) paid++;
  }
  // The others are paid; a retry of the finishing job pays the ones that failed, and no one twice.
  if (failed.length) throw new Error(`${failed.length} partner payment(s) failed: ${failed.join('; ').slice(0, 400)}`);
  return paid;
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
    for (const h of held.filter((x) => x.charge === 'instant' && dec(x.amount).gt(0))) {
      const paid = await run(
        PAY_INSTANT.bind({
          customer_id: h.partner_customer_id,
          partner_id: h.partner_id,
          amount: dec(h.amount).toFixed(2),
          reference_id: h.ticket,
          comment: `IB reward released, order ${h.ticket}`,
          data: JSON.stringify({
            partner_id: h.partner_id,
            amount: dec(h.amount).toFixed(2),
            currency: WALLET_CURRENCY,
            accruals: 1,
            ticket: h.ticket,
          }),
        }),
      );
      if (paid.length) await run(MARK_PAID.bind({ ids: JSON.stringify([h.id]), payment_id: null }));
    }
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
