import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Account } from '../../entities/account.entity';
import { dec, type Dec } from '../../platform/decimal';
import { assertCreditFits } from '../../platform/bounds';
import type { StaffCaller } from '../../platform/caller';
import { fieldError } from '../../platform/errors';
import { CurrencyCode, MoneyText } from '../../platform/money-text';
import { lockAccounts } from '../accounts/accounts';
import { recordAudit } from '../audit/audit';
import { recordEvent } from '../events/outbox';
import { postToLedger } from '../ledger/posting';

/**
 * Credit, the non-withdrawable bucket of an account: what a broker lends a customer to trade
 * with (a bonus, a promotion, a manual credit). It counts in equity, so it carries margin, but
 * losses hit the balance, and it becomes withdrawable money only by a bonus release. Every
 * change is a ledger row of bucket `credit` booked through the posting module, and emits
 * `account.credit_changed`.
 */

export const CREDIT_REASONS = ['manual', 'bonus', 'bonus_release', 'bonus_end', 'stop_out', 'forfeit'] as const;
export type CreditReason = (typeof CREDIT_REASONS)[number];

export const CreditChangeSchema = z.object({
  id: z.uuid().describe('The ledger row of the change'),
  login: z.int(),
  direction: z.enum(['in', 'out']),
  amount: MoneyText.describe('Positive: how much entered or left the credit'),
  currency: CurrencyCode,
  balance: MoneyText,
  credit: MoneyText.describe('The credit after the change'),
  reason: z.enum(CREDIT_REASONS),
  comment: z.string().nullable(),
  created_at: z.iso.datetime(),
});
export type CreditChangeView = z.output<typeof CreditChangeSchema>;

/**
 * Books `amount` (positive) into or out of a locked account's credit, with its ledger row
 * (`credit_in` or `credit_out`) and the `account.credit_changed` event, in the caller's
 * transaction. The caller checks that a credit out fits (postToLedger refuses a negative credit).
 */
export function bookCredit(
  tx: EntityManager,
  account: Account,
  change: {
    direction: 'in' | 'out';
    amount: Dec;
    reason: CreditReason;
    reference: { type: string; id: string };
    comment?: string | null;
  },
): CreditChangeView {
  const signed = change.direction === 'in' ? change.amount : change.amount.neg();
  const entry = postToLedger(
    tx,
    account,
    signed,
    change.direction === 'in' ? 'credit_in' : 'credit_out',
    change.reference,
    change.comment ?? null,
    'credit',
  );
  const view: CreditChangeView = {
    id: entry.id,
    login: Number(account.login),
    direction: change.direction,
    amount: dec(entry.amount).abs().toFixed(2),
    currency: account.currency,
    balance: dec(account.balance).toFixed(2),
    credit: dec(account.credit).toFixed(2),
    reason: change.reason,
    comment: change.comment ?? null,
    created_at: entry.createdAt.toISOString(),
  };
  recordEvent(tx, {
    type: 'account.credit_changed',
    aggregateType: 'account',
    aggregateId: account.login,
    customerId: account.customer.id,
    data: view,
  });
  return view;
}

/** POST /api/backoffice/accounts/{login}/credit: staff credit in or out, audited, in one transaction. */
export async function changeCreditByHand(
  em: EntityManager,
  actor: StaffCaller,
  account: Account,
  body: { direction: 'in' | 'out'; amount: number; comment: string },
): Promise<CreditChangeView> {
  return em.transactional(async (tx) => {
    const locked = (await lockAccounts(tx, [account.id])).get(account.id)!;
    const amount = dec(body.amount);
    const before = { balance: locked.balance, credit: locked.credit };
    if (body.direction === 'in') assertCreditFits(locked.credit, amount);
    else if (amount.gt(dec(locked.credit)))
      throw fieldError(
        'body',
        ['amount'],
        `The account's credit is ${dec(locked.credit).toFixed(2)} ${locked.currency}: no more can leave it`,
      );
    const view = bookCredit(tx, locked, {
      direction: body.direction,
      amount,
      reason: 'manual',
      reference: { type: 'credit', id: randomUUID() },
      comment: body.comment,
    });
    recordAudit(tx, actor, {
      action: `account.credit_${body.direction}`,
      entityType: 'account',
      entityId: locked.login,
      before,
      after: view,
    });
    return view;
  });
}

/**
 * What a stop-out does to credit: when it leaves the account with nothing open and a balance at
 * or below zero, the whole credit goes (`credit_out`, reason `stop_out`), before negative
 * balance protection books its compensation, so the broker never covers a loss while its own
 * credit is still on the account. The account row is locked by the stop-out. Answers the
 * amount removed, or null.
 */
export function removeCreditAfterStopOut(tx: EntityManager, account: Account, stoppedOut: readonly string[]): string | null {
  const credit = dec(account.credit);
  if (credit.lte(0) || dec(account.balance).gt(0)) return null;
  bookCredit(tx, account, {
    direction: 'out',
    amount: credit,
    reason: 'stop_out',
    reference: { type: 'account', id: account.login },
    comment: `Credit removed after the stop-out of ${stoppedOut.join(', ')}`,
  });
  return credit.toFixed(2);
}
