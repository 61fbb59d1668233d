import { randomUUID } from 'node:crypto';
import Decimal from 'decimal.js';
import type { RunBound } from '../../db/bound-transaction';
import type { IbLevelValue } from '../../entities/partner.entity';
import { dec, type Dec } from '../../platform/decimal';
import { referredSql, type PostingHook } from '../ledger/posting';
import { allowedAhead, evaluateFraudOn, type FraudDecision } from '../fraud/evaluate';
import { WALLET_CURRENCY } from '../accounts/accounts';
import { CLOSE_CHAIN, CLOSE_CHAIN_AT_CLOSE, INSERT_ACCRUALS, insertAccrualsEvaluated } from './partners.queries';
import { instantPayment, payRewards } from './reward-payment';

/**
 * Rewards of introducing brokers, accrued in the transaction of the close that earns them
 * (installed in src/policy.ts). The close statement tells whether the account's customer
 * trades under a partner at all (`referred`), so a close of a client without one pays no
 * round trip here; and it reads the chain of partners in passing (CLOSE_CHAIN_AT_CLOSE).
 */
export const IbAccrualHook: PostingHook = {
  name: 'ib_accrual',
  flows: ['order_close'],
  statementPart: CLOSE_CHAIN_AT_CLOSE,
  // A client without a partner earns nobody anything. The read before the close says whether
  // it has one; the guard asks again under the lock, so a partner attributed since that read
  // holds the close for the transaction.
  idleWhen: { sql: `not ${referredSql('a.customer_id')}`, likely: (account) => account.referred !== true },
  async after(run, posting) {
    if (!posting.account.referred) return;
    await accrueClose(run, posting.reference.id, posting.answers?.['ib_accrual'] as ChainRow[] | undefined);
  },
};

interface ChainRow {
  ticket: string;
  login: string;
  symbol: string;
  lots: string;
  /** A Date as CLOSE_CHAIN reads it, text as the close's part answers it. */
  closed_at: Date | string;
  customer_id: string;
  currency: string;
  group_id: string | null;
  email: string;
  country: string | null;
  held_seconds: number;
  commission: string;
  spread: string | null;
  level: number;
  partner_id: string;
  partner_customer_id: string;
  plan_id: string;
  under_case: boolean;
  plan: PlanRow | null;
}

interface PlanRow {
  id: string;
  currency: string;
  basis: 'commission_pct' | 'per_lot' | 'spread_pct';
  levels: IbLevelValue[];
  max_per_lot: string | null;
  group_ids: string[] | null;
  symbol_overrides: Record<string, IbLevelValue[]> | null;
  charge: 'instant' | 'daily';
  min_hold_seconds: number;
}

/** What one level of a close earns, before the exclusions: the plan's value for that level applied to the basis. */
export function levelAmounts(plan: PlanRow, symbol: string, lots: Dec, commission: Dec, spread: Dec | null): Map<number, Dec> {
  const levels = plan.symbol_overrides?.[symbol.toUpperCase()] ?? plan.levels;
  const out = new Map<number, Dec>();
  // Amounts are cut to the cent downwards, so the levels together never pass what the order paid.
  const cut = (v: Dec) => v.toDecimalPlaces(2, Decimal.ROUND_DOWN);
  let capLeft = plan.basis === 'per_lot' && plan.max_per_lot ? dec(plan.max_per_lot).times(lots) : null;
  for (const l of [...levels].sort((a, b) => a.level - b.level)) {
    let amount: Dec;
    if (plan.basis === 'commission_pct') amount = cut(commission.times(l.value).div(100));
    else if (plan.basis === 'spread_pct') amount = spread ? cut(spread.times(l.value).div(100)) : dec(0);
    else amount = cut(lots.times(l.value));
    // max_per_lot caps the sum across levels: the nearest levels are served first.
    if (capLeft) {
      amount = Decimal.min(amount, cut(capLeft));
      capLeft = capLeft.minus(amount);
    }
    out.set(l.level, amount);
  }
  return out;
}

/**
 * Accrues one closed order: one row per partner of the chain, whatever it earns (an exclusion
 * is a row of 0 with its reason), so the order is settled once. The plan is the one of the
 * chain's first partner, so the levels of one order never share more than that plan allows.
 * Instant plans pay in this transaction; daily ones wait for the end of day. `read` is the
 * chain as the close's statement answered it; without it, it is read here.
 */
export async function accrueClose(run: RunBound, ticket: string, read?: readonly ChainRow[]): Promise<void> {
  const chain = read ?? (await run<ChainRow>(CLOSE_CHAIN.bind({ ticket })));
  if (chain.length === 0) return;
  const first = chain[0]!;
  const plan = first.plan;
  if (!plan) return;
  if (plan.group_ids && plan.group_ids.length > 0 && !(first.group_id && plan.group_ids.includes(first.group_id))) return;

  const lots = dec(first.lots);
  const amounts = levelAmounts(plan, first.symbol, lots, dec(first.commission), first.spread ? dec(first.spread) : null);
  const commonReason =
    first.currency !== plan.currency || plan.currency !== WALLET_CURRENCY
      ? 'currency'
      : first.held_seconds < plan.min_hold_seconds
        ? 'short_hold'
        : null;
  // The ib_accrual rules see the client's close; a review holds every level of it.
  const evaluated = !commonReason && chain.some((c) => (amounts.get(c.level) ?? dec(0)).gt(0));
  const signals = {
    customerId: first.customer_id,
    amount: dec(first.commission).toFixed(2),
    currency: first.currency,
    // The chain read them: no rule's field reads the customer's row for them.
    email: first.email,
    country: first.country,
  };
  const reference = { type: 'order', id: ticket };
  // A level the plan does not pay is no row at all; a partner's own order is, to say why it earned nothing.
  const paying = chain.filter((c) => amounts.has(c.level) || c.partner_customer_id === c.customer_id);
  const rowsOn = (decision: FraudDecision) => accrualRows(ticket, plan, paying, amounts, commonReason, decision);
  let rows: AccrualRow[] = [];
  let inserted: InsertedAccrual[] | null = null;
  // An allow decided on the rules this process holds is stored by the accruals' own statement,
  // which inserts them only if those rules still stand. Any other decision takes the usual way.
  const ahead = evaluated ? allowedAhead('ib_accrual', signals, reference) : null;
  if (ahead) {
    rows = rowsOn('allow');
    const [answer] = await run<AccrualsAnswer>(insertAccrualsEvaluated(ahead.cte, JSON.stringify(rows)));
    if (answer!.stored) inserted = answer!.inserted;
  }
  if (inserted === null) {
    // A close cannot be refused: a block rule leaves the order without rewards instead.
    const decision = evaluated ? (await evaluateFraudOn(run, 'ib_accrual', signals, reference)).decision : 'allow';
    rows = rowsOn(decision);
    const [answer] = await run<AccrualsAnswer>(INSERT_ACCRUALS.bind({ rows: JSON.stringify(rows) }));
    inserted = answer!.inserted;
  }
  if (plan.charge !== 'instant') return;
  // A partner without a wallet is paid nothing: its accrual stays owed, never marked paid.
  await payRewards(
    run,
    'instant',
    inserted
      .filter((ins) => ins.status === 'accrued' && dec(ins.amount).gt(0))
      .map((ins) => {
        const row = rows.find((r) => r.id === ins.id)!;
        return instantPayment({
          customerId: row.partner_customer_id,
          partnerId: ins.partner_id,
          amount: dec(ins.amount).toFixed(2),
          currency: row.currency,
          ticket,
          accrualId: ins.id,
          comment: `IB reward, level ${ins.level}, order ${ticket}`,
        });
      }),
  );
}

/** An accrual as the accruals' insert takes it (INSERT_ACCRUALS). */
type AccrualRow = ReturnType<typeof accrualRows>[number];

/** A row the accruals' insert inserted. */
interface InsertedAccrual {
  id: string;
  partner_id: string;
  level: number;
  amount: string;
  status: string;
}

interface AccrualsAnswer {
  inserted: InsertedAccrual[];
  stored: boolean;
}

/**
 * The accruals of one close: a row per paying partner of the chain, its status and reason from
 * the exclusions (self trading, then the common reason, then a fraud block, then nothing
 * earned) and the fraud decision (a review, or an open case, holds it).
 */
function accrualRows(
  ticket: string,
  plan: PlanRow,
  paying: readonly ChainRow[],
  amounts: ReadonlyMap<number, Dec>,
  commonReason: string | null,
  decision: FraudDecision,
) {
  const blocked = decision === 'block';
  const held = decision === 'review';
  return paying.map((c) => {
    const earned = amounts.get(c.level) ?? dec(0);
    let status: string = plan.charge === 'instant' ? 'paid' : 'accrued';
    let reason: string | null = null;
    if (c.partner_customer_id === c.customer_id) reason = 'self_trading';
    else if (commonReason) reason = commonReason;
    else if (blocked) reason = 'fraud_blocked';
    else if (earned.isZero()) reason = 'no_reward';
    if (reason) status = 'excluded';
    else if (held || c.under_case) {
      status = 'on_hold';
      reason = 'fraud_case';
    }
    const id = randomUUID();
    const amount = status === 'excluded' ? '0.00' : earned.toFixed(2);
    // Inserted as accrued; an instant payment marks it paid once its ledger row is booked.
    const inserted = status === 'paid' ? 'accrued' : status;
    const closedAt = new Date(c.closed_at).toISOString();
    return {
      id,
      ticket,
      partner_id: c.partner_id,
      level: c.level,
      plan_id: plan.id,
      client_customer_id: c.customer_id,
      login: c.login,
      symbol: c.symbol,
      lots: c.lots,
      amount,
      currency: plan.currency,
      status: inserted,
      reason,
      charge: plan.charge,
      closed_at: closedAt,
      partner_customer_id: c.partner_customer_id,
      // ib.reward_accrued's data: the accrual's view, written with the row when it is inserted.
      data: JSON.stringify({
        id,
        ticket,
        partner_id: c.partner_id,
        level: c.level,
        symbol: c.symbol,
        lots: dec(c.lots).toFixed(2),
        amount,
        currency: plan.currency,
        status: inserted,
        reason,
        closed_at: closedAt,
      }),
    };
  });
}
