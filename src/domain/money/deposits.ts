import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Account } from '../../entities/account.entity';
import { dec } from '../../platform/decimal';
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
    assertCreditFits(locked.balance, dec(amount));
    await assertDepositAllowed(tx, locked.customer.id, dec(amount), locked.currency);
    const depositId = randomUUID();
    const posting = {
      flow: 'deposit',
      account: postedAccount(locked),
      amount: dec(amount).toFixed(2),
      reference: { type: 'deposit', id: depositId },
    } as const;
    await runPostingHooks(tx, 'before', posting);
    const entry = postToLedger(tx, locked, dec(amount), 'deposit', posting.reference, comment);
    const view: DepositView = {
      id: depositId,
      login: Number(locked.login),
      amount: entry.amount,
      currency: locked.currency,
      balance: locked.balance,
      comment: comment ?? null,
      created_at: entry.createdAt.toISOString(),
    };
    recordAudit(tx, actor, {
      action: 'deposit.created',
      entityType: 'account',
      entityId: locked.login,
      before: { balance: before },
      after: view,
    });
    recordEvent(tx, {
      type: 'deposit.completed',
      aggregateType: 'account',
      aggregateId: locked.login,
      customerId: locked.customer.id,
      data: view,
    });
    await runPostingHooks(tx, 'after', posting);
    return view;
  });
}
