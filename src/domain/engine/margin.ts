import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../entities/account.entity';
import { Order } from '../../entities/order.entity';
import { dec, type Dec } from '../../platform/decimal';

import { lockAccounts } from '../accounts/accounts';
import { accountView } from '../accounts/account-view';
import { recordEvent } from '../events/outbox';
import { removeCreditAfterStopOut } from '../bonuses/credit';
import { forfeitAfterStopOut } from '../bonuses/bonuses';
import { postToLedger } from '../ledger/posting';
import { metricsOf, type OpenPosition } from '../accounts/account-metrics';
import { closeAtPricing } from '../orders/close-order';
import { PricingContext, PricingError } from '../prices/pricing-context';
import { closingPrice, profitInQuoteCurrency } from '../prices/trading-math';
import type { QuoteStore } from '../prices/quote-store';
import { PricingTermsCache } from '../prices/pricing-terms';
import { executeBoundInTransaction, executeNamed } from '../../db/bound-statement';
import { LOCK_OPEN_ORDERS, SET_MARGIN_CALL_ACTIVE } from '../accounts/accounts.queries';

export interface MarginOutcome {
  marginCall: boolean;
  stoppedOut: string[];
  /** What negative balance protection credited after the stop-out (decimal text), or null. */
  compensated: string | null;
}

/**
 * LOCK ORDER. Every close locks the order's row before its account's: the one closing
 * statement updates the order, then the balance (a manual close, a bulk-close ticket, sl and
 * tp). The stop-out follows it: it locks all the account's open orders, in ticket order,
 * before the account, so it can never hold the account while waiting for an order a
 * concurrent close holds (that would be a deadlock). A pending order's fill locks the pending
 * row, then the account, and only inserts into orders.
 *
 * Margin level = equity / margin x 100, with the account locked. Below the
 * group's margin_call_level the account gets one `account.margin_call` per crossing (a
 * flag on the account, cleared when the level is back at or above it, or by
 * openMarketOrder when it opens on an account with nothing open); below its
 * stopout_level its most losing open order is closed (reason `stop_out`), again and again,
 * until the level is restored or nothing is open, and one `account.stop_out` names them.
 */
export async function checkMargin(em: EntityManager, quotes: QuoteStore, accountId: string): Promise<MarginOutcome> {
  return em.transactional(async (tx) => {
    const outcome: MarginOutcome = { marginCall: false, stoppedOut: [], compensated: null };
    await executeNamed(tx, LOCK_OPEN_ORDERS.bind({ account_id: accountId }));
    if (!(await lockAccounts(tx, [accountId])).get(accountId)) return outcome;
    const account = await tx.findOneOrFail(Account, accountId, { populate: ['group'], refresh: true });
    const group = account.group?.getEntity();
    if (!group) return outcome;
    const callLevel = dec(group.marginCallLevel);
    const stopLevel = dec(group.stopoutLevel);
    // The level before this pass closed anything, and after (null: nothing left to margin).
    let firstLevel: Dec | null = null;
    let level: Dec | null = null;
    for (let round = 0; round < 10_000; round++) {
      level = null;
      const open = await tx.find(Order, { account: accountId, status: 'open' }, { refresh: true });
      if (open.length === 0) break;
      await tx.refresh(account);
      const pricing = await PricingContext.load(
        tx,
        quotes,
        account,
        open.map((o) => o.symbol),
      );
      const m = metricsOf(account, open, pricing);
      if (m.margin.lte(0)) break;
      level = m.equity.div(m.margin).times(100);
      firstLevel ??= level;
      if (level.gte(stopLevel)) break;
      const worst = mostLosing(open, pricing);
      if (!worst) break;
      // At the quotes this level was measured with; the account as locked and read above tells
      // the close's hooks its credit (whether it has a partner is left to the guard).
      const closed = await closeAtPricing(
        tx,
        open.find((o) => o.ticket === worst)!,
        pricing,
        'stop_out',
        null,
        account,
      );
      if (closed.kind !== 'closed') break;
      outcome.stoppedOut.push(worst);
    }
    // The account row is locked and was read fresh above, flag included.
    const active = account.marginCallActive;
    outcome.marginCall = firstLevel !== null && firstLevel.lt(callLevel) && !active;
    // The flag stays up while the level is below the call level, and drops once it is back.
    const nowBelow = level !== null && level.lt(callLevel);
    if (nowBelow !== active) await executeNamed(tx, SET_MARGIN_CALL_ACTIVE.bind({ account_id: accountId, active: nowBelow }));
    if (outcome.marginCall || outcome.stoppedOut.length) {
      await tx.refresh(account);
      const view = await accountView(tx, quotes, account);
      if (outcome.marginCall)
        recordEvent(tx, {
          type: 'account.margin_call',
          aggregateType: 'account',
          aggregateId: account.login,
          customerId: account.customer.id,
          data: { ...view, margin_level: firstLevel!.toFixed(2), margin_call_level: callLevel.toNumber() },
        });
      if (outcome.stoppedOut.length)
        recordEvent(tx, {
          type: 'account.stop_out',
          aggregateType: 'account',
          aggregateId: account.login,
          customerId: account.customer.id,
          data: {
            ...view,
            margin_level: firstLevel!.toFixed(2),
            stopout_level: stopLevel.toNumber(),
            closed_orders: outcome.stoppedOut.map(Number),
          },
        });
      if (outcome.stoppedOut.length) {
        // Credit goes first, so the compensation covers only what the customer's own money could not.
        if (
          (await tx.count(Order, { account: account.id, status: 'open' })) === 0 &&
          dec(account.balance).lte(0) &&
          dec(account.credit).gt(0)
        ) {
          // Bonuses first (statements), then the entity re-read, then what credit is left.
          await forfeitAfterStopOut((s) => executeBoundInTransaction(tx, s), account.id);
          await tx.refresh(account);
          removeCreditAfterStopOut(tx, account, outcome.stoppedOut);
        }
        outcome.compensated = await protectNegativeBalance(tx, quotes, account, outcome.stoppedOut);
      }
    }
    return outcome;
  });
}

/**
 * Negative balance protection: a stop-out that leaves the account with nothing
 * open and a balance below zero books, in its transaction (the account row locked), a
 * `negative_balance_compensation` row bringing the balance to exactly 0, and emits
 * `account.negative_balance_compensated`. Answers the amount credited, or null.
 */
async function protectNegativeBalance(
  tx: EntityManager,
  quotes: QuoteStore,
  account: Account,
  stoppedOut: string[],
): Promise<string | null> {
  const balance = dec(account.balance);
  if (balance.gte(0)) return null;
  if ((await tx.count(Order, { account: account.id, status: 'open' })) > 0) return null;
  const credit = balance.neg();
  postToLedger(
    tx,
    account,
    credit,
    'negative_balance_compensation',
    { type: 'account', id: account.login },
    `Negative balance protection after the stop-out of ${stoppedOut.join(', ')}`,
  );
  recordEvent(tx, {
    type: 'account.negative_balance_compensated',
    aggregateType: 'account',
    aggregateId: account.login,
    customerId: account.customer.id,
    data: {
      ...(await accountView(tx, quotes, account)),
      amount: credit.toFixed(2),
      balance_before: balance.toFixed(2),
      closed_orders: stoppedOut.map(Number),
    },
  });
  return credit.toFixed(2);
}

/** How long the margin pre-check reuses pricing terms (instruments, group rows, conversions). */
const PRECHECK_TERMS_TTL_MS = 5_000;
const precheckTerms = new PricingTermsCache(PRECHECK_TERMS_TTL_MS);

/**
 * An account holding a ticked symbol, as the pass's lookup reads it (candidates.ts): what the
 * margin pre-check needs, with no entity loaded. Decimals as text.
 */
export interface MarginHolder {
  account_id: string;
  margin_call_active: boolean;
  /** Whether a prop challenge of the account is active. */
  challenge: boolean;
  balance: string;
  /** Counts in equity, as the locked check counts it. */
  credit: string;
  currency: string;
  group_id: string | null;
  /** The account's own leverage, else its group's default. */
  leverage: number;
  /** The group's margin call level (null: the account has no group). */
  margin_call_level: string | null;
  /** Every open order of the account, whatever its symbol. */
  open: Array<{ symbol: string; cmd: number; volume: string; openPrice: string; contractSize: string }>;
}

/**
 * Whether checkMargin has anything to do: the level (without locks, at current quotes) is
 * below the group's margin call level, or the account's call flag is up and may need to drop.
 * Computed from the holder's row as the pass's lookup read it (balance and open orders read
 * with the tick's candidates, in the same round trip); the pricing terms, which change only
 * when staff edit instruments or group rows, are reused for up to PRECHECK_TERMS_TTL_MS per
 * group, currency and symbols. The locked check itself always reads everything afresh.
 */
export async function marginNeedsCheck(em: EntityManager, quotes: QuoteStore, holder: MarginHolder): Promise<boolean> {
  if (holder.margin_call_active) return true;
  const { group_id: groupId, currency, margin_call_level: callLevel } = holder;
  if (!groupId || callLevel === null || holder.open.length === 0) return false;
  const symbols = [...new Set(holder.open.map((o) => o.symbol))].sort();
  // Terms depend on the group, the account currency and the symbols only: accounts alike share them.
  const terms = await precheckTerms.get(em, { currency, groupId }, symbols);
  // Pricing reads only the currency of the account it is loaded for (and metricsOf its balance and credit).
  const account = { currency, balance: holder.balance, credit: holder.credit } as Account;
  const pricing = await PricingContext.load(em, quotes, account, symbols, terms);
  const open: OpenPosition[] = holder.open.map((o) => ({ ...o, cmd: Number(o.cmd) as 0 | 1 }));
  const m = metricsOf(account, open, pricing, Number(holder.leverage));
  return m.margin.gt(0) && m.equity.div(m.margin).times(100).lt(dec(callLevel));
}

/** The open order with the lowest floating profit in the account currency (ties: the oldest ticket). */
function mostLosing(open: Order[], pricing: PricingContext): string | null {
  let worst: { ticket: string; profit: Dec } | null = null;
  for (const o of [...open].sort((a, b) => Number(a.ticket) - Number(b.ticket))) {
    let profit: Dec;
    try {
      const q = pricing.quote(o.symbol);
      const raw = profitInQuoteCurrency(o.cmd, dec(o.openPrice), closingPrice(o.cmd, q), dec(o.volume), dec(o.contractSize));
      profit = pricing.toAccountCurrency(raw, q.instrument.quoteCurrency);
    } catch (err) {
      if (err instanceof PricingError) continue;
      throw err;
    }
    if (!worst || profit.lt(worst.profit)) worst = { ticket: o.ticket, profit };
  }
  return worst?.ticket ?? null;
}
