import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Account } from '../../entities/account.entity';
import { dec, money, type Dec } from '../../platform/decimal';
import { lockAccounts } from '../accounts/accounts';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { recordEvent } from '../events/outbox';
import { postedAccount, postToLedger, runPostingHooks } from '../ledger/posting';
import { assertCreditFits } from '../../platform/bounds';
import { assertDepositAllowed } from '../compliance/limits';
import { CurrencyCode, MoneyText } from '../../platform/money-text';

export const DepositSchema = z.object({
  id: z.uuid(),
  login: z.int(),
  amount: MoneyText,
  currency: CurrencyCode,
  balance: MoneyText.describe('The balance after the deposit'),
  comment: z.string().nullable(),
  created_at: z.iso.datetime(),
});
export type DepositView = z.output<typeof DepositSchema>;

/** Where the money came from: the ledger row's reference, and what the deposit event adds to the view. */
export interface DepositSource {
  reference: { type: 'deposit' | 'deposit_intent'; id: string };
  comment?: string | null;
  /** Extra fields of the `deposit.completed` event (a provider's id and its payment id). */
  eventData?: Record<string, unknown>;
}

/**
 * The one way money comes in: the posting hooks of the `deposit` flow, the balance and its
 * ledger row (kind `deposit`) through the posting module, and the `deposit.completed` event,
 * in the caller's transaction. The caller holds the account's row locked (lockAccounts). A
 * staff deposit and a provider's payment both book here; the ledger's unique index on a
 * provider deposit's intent makes a second credit of one payment fail the transaction that
 * tries it.
 */
export async function bookDeposit(tx: EntityManager, locked: Account, amount: Dec, source: DepositSource): Promise<DepositView> {
  assertCreditFits(locked.balance, amount);
  const posting = {
    flow: 'deposit',
    account: postedAccount(locked),
    amount: money(amount).toFixed(2),
    reference: source.reference,
  } as const;
  await runPostingHooks(tx, 'before', posting);
  const entry = postToLedger(tx, locked, amount, 'deposit', source.reference, source.comment);
  const view: DepositView = {
    id: source.reference.id,
    login: Number(locked.login),
    amount: entry.amount,
    currency: locked.currency,
    balance: locked.balance,
    comment: source.comment ?? null,
    created_at: entry.createdAt.toISOString(),
  };
  recordEvent(tx, {
    type: 'deposit.completed',
    aggregateType: 'account',
    aggregateId: locked.login,
    customerId: locked.customer.id,
    data: { ...view, ...source.eventData },
  });
  await runPostingHooks(tx, 'after', posting);
  return view;
}

/**
 * Takes back what a deposit credited (a provider's charge-back or refund): a negative row of
 * `kind`, booked even when it leaves the account below zero, since the money is already gone
 * (a wallet below zero then lets nothing leave it: the posting path's negative-wallet hook).
 * The `deposit_reversal` flow's hooks run around it: what other areas do about a reversal (a
 * fraud case, forfeiting bonuses granted on the deposit) attaches there, in this transaction.
 * The caller holds the account's row locked.
 */
export async function bookDepositReversal(
  tx: EntityManager,
  locked: Account,
  amount: Dec,
  kind: 'chargeback' | 'deposit_refund',
  reference: { type: 'deposit_intent'; id: string },
): Promise<void> {
  const taken = money(amount).negated();
  const posting = { flow: 'deposit_reversal', account: postedAccount(locked), amount: taken.toFixed(2), reference } as const;
  await runPostingHooks(tx, 'before', posting);
  postToLedger(tx, locked, taken, kind, reference, null);
  await runPostingHooks(tx, 'after', posting);
}

/** Credits an account: balance, ledger row, audit row and deposit event in one transaction. */
export async function depositFunds(
  em: EntityManager,
  actor: StaffCaller,
  account: Account,
  amount: number,
  comment: string | null | undefined,
): Promise<DepositView> {
  return em.transactional(async (tx) => {
    const locked = (await lockAccounts(tx, [account.id])).get(account.id)!;
    const before = locked.balance;
    await assertDepositAllowed(tx, locked.customer.id, dec(amount), locked.currency);
    const view = await bookDeposit(tx, locked, dec(amount), { reference: { type: 'deposit', id: randomUUID() }, comment });
    recordAudit(tx, actor, {
      action: 'deposit.created',
      entityType: 'account',
      entityId: locked.login,
      before: { balance: before },
      after: view,
    });
    return view;
  });
}
