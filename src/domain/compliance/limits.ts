import type { EntityManager } from '@mikro-orm/postgresql';
import { executeNamed } from '../../db/bound-statement';
import { dec, type Dec } from '../../platform/decimal';
import { AppError, fieldError } from '../../platform/errors';
import { depositedSince } from '../ledger/ledger';
import { CUSTOMER_LEVEL, CUSTOMER_LEVEL_TERMS, LOCK_CUSTOMER_DEPOSITS, WITHDRAWN_SINCE } from './compliance.queries';
import type { VerificationLevels } from './verification-levels';

/**
 * What each verification level allows, enforced. Trading (orders,
 * pending orders, transfers) and withdrawing (withdrawals, prop payouts) are refused with 403
 * VERIFICATION_REQUIRED; an amount over a daily or monthly limit is 422 at `amount`.
 * Days and months are UTC calendar days and months. Limits are money in the currency of the
 * account concerned, with no conversion: a withdrawal counts the customer's withdrawals in
 * its wallet's currency, a deposit the customer's deposits into accounts of the same currency.
 */

export function verificationRequired(what: 'trade' | 'withdraw', level: number): AppError {
  const doing = what === 'trade' ? 'trading' : 'withdrawals';
  return new AppError(
    403,
    'VERIFICATION_REQUIRED',
    `Verification level ${level} does not allow ${doing}: submit your documents for review (POST /customers/me/documents)`,
  );
}

/**
 * Refuses a customer whose level may not trade. Hot path (every order open): when no level
 * refuses trading, which is the default, this reads nothing but the process's copy of the
 * levels; otherwise one primary-key read of the customer's level.
 */
export async function assertMayTrade(em: EntityManager, levels: VerificationLevels, customerId: string): Promise<void> {
  const terms = await levels.current(em);
  if (terms.every((t) => t.canTrade)) return;
  const [row] = await executeNamed<{ level: number }>(em, CUSTOMER_LEVEL.bind({ customer_id: customerId }));
  if (!row) return;
  const level = Number(row.level);
  if (!terms.find((t) => t.level === level)?.canTrade) throw verificationRequired('trade', level);
}

interface CustomerTerms {
  level: number;
  can_trade: boolean;
  can_withdraw: boolean;
  max_deposit_per_day: string | null;
  max_withdrawal_per_day: string | null;
  max_withdrawal_per_month: string | null;
}

async function customerTerms(em: EntityManager, customerId: string): Promise<CustomerTerms | undefined> {
  const [row] = await executeNamed<CustomerTerms>(em, CUSTOMER_LEVEL_TERMS.bind({ customer_id: customerId }));
  return row && { ...row, level: Number(row.level) };
}

/** A customer's payout request: refused when its level may not withdraw (payouts carry no limits of their own). */
export async function assertMayWithdraw(em: EntityManager, customerId: string): Promise<void> {
  const terms = await customerTerms(em, customerId);
  if (terms && !terms.can_withdraw) throw verificationRequired('withdraw', terms.level);
}

export function startOfUtcDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}

export function startOfUtcMonth(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

function overLimit(limit: string, used: Dec, currency: string, period: string) {
  const left = dec(limit).minus(used);
  return fieldError(
    'body',
    ['amount'],
    `The amount exceeds your ${period} limit at your verification level: ${left.isNegative() ? '0.00' : left.toFixed(2)} ${currency} left of ${dec(limit).toFixed(2)} ${currency}`,
  );
}

/**
 * Inside the withdrawal's transaction, after the wallet's row is locked: every withdrawal of
 * the customer takes that lock (one wallet per customer), so two requests in parallel count
 * each other and cannot pass a limit together. Pending and completed withdrawals count.
 */
export async function assertWithdrawalAllowed(
  tx: EntityManager,
  customerId: string,
  amount: Dec,
  currency: string,
): Promise<void> {
  const terms = await customerTerms(tx, customerId);
  if (!terms) return;
  if (!terms.can_withdraw) throw verificationRequired('withdraw', terms.level);
  const now = new Date();
  for (const [limit, since, period] of [
    [terms.max_withdrawal_per_day, startOfUtcDay(now), 'daily withdrawal'],
    [terms.max_withdrawal_per_month, startOfUtcMonth(now), 'monthly withdrawal'],
  ] as const) {
    if (limit === null) continue;
    const [row] = await executeNamed<{ total: string }>(tx, WITHDRAWN_SINCE.bind({ customer_id: customerId, currency, since }));
    const used = dec(row?.total ?? '0');
    if (used.plus(amount).gt(limit)) throw overLimit(limit, used, currency, period);
  }
}

/**
 * Inside the deposit's transaction, after the account's row is locked. A customer's deposits
 * may go to different accounts (different locks), so when a daily limit is set they also take
 * a per-customer advisory lock before counting.
 */
export async function assertDepositAllowed(tx: EntityManager, customerId: string, amount: Dec, currency: string): Promise<void> {
  const terms = await customerTerms(tx, customerId);
  const limit = terms?.max_deposit_per_day ?? null;
  if (limit === null) return;
  await executeNamed(tx, LOCK_CUSTOMER_DEPOSITS.bind({ key: `deposit-limit:${customerId}` }));
  const used = dec(await depositedSince(tx, customerId, currency, startOfUtcDay(new Date())));
  if (used.plus(amount).gt(limit)) throw overLimit(limit, used, currency, 'daily deposit');
}
