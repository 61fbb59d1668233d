import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../../entities/account.entity';
import type { LedgerEntry, LedgerKind } from '../../entities/ledger-entry.entity';
import { money, type Dec } from '../../platform/decimal';
import { postToLedger } from './posting';

/**
 * The two phases of money that leaves on a decision (a withdrawal, a payout): a request
 * reserves the amount, a pending hold on the balance that nothing else may spend; the
 * decision either posts it (the hold lifts and the amount leaves through the ledger) or
 * releases it (the hold lifts, the balance untouched). Every function changes the account
 * entity in the caller's unit of work, so the caller holds the account row locked
 * (lockAccounts) and the hold commits with the request or decision it belongs to.
 * `reserved` never counts in the balance: it is only what the balance may not give elsewhere.
 */

/** Phase one: holds `amount` back from what the account may spend elsewhere. */
export function reserveHold(account: Account, amount: Dec): void {
  account.reserved = money(account.reserved).plus(amount).toFixed(2);
}

/** Phase two, voided: the hold lifts and the balance is untouched. */
export function releaseHold(account: Account, amount: Dec): void {
  account.reserved = money(account.reserved).minus(amount).toFixed(2);
}

/** Phase two, posted: the hold lifts and `amount` leaves the balance with its ledger row. */
export function postHold(
  em: EntityManager,
  account: Account,
  amount: Dec,
  kind: LedgerKind,
  reference: { type: string; id: string | number },
  comment: string,
): LedgerEntry {
  releaseHold(account, amount);
  return postToLedger(em, account, amount.neg(), kind, reference, comment);
}
