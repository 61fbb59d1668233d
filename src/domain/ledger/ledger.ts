import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Account } from '../../entities/account.entity';
import { LEDGER_KINDS, LedgerEntry, type LedgerKind } from '../../entities/ledger-entry.entity';
import { money, type Dec } from '../../platform/decimal';
import { MoneyText } from '../money/money-text';

export const LedgerSchema = z.object({
  id: z.uuid(),
  seq: z.int().describe('Booking order: rows are numbered as they are booked, and balance_after chains in this order'),
  kind: z.enum(LEDGER_KINDS),
  amount: MoneyText,
  balance_after: MoneyText,
  reference_type: z.string().nullable(),
  reference_id: z.string().nullable(),
  comment: z.string().nullable(),
  created_at: z.iso.datetime(),
});
type LedgerView = z.output<typeof LedgerSchema>;

export function ledgerView(r: LedgerEntry): LedgerView {
  return {
    id: r.id,
    seq: Number(r.seq),
    kind: r.kind,
    amount: r.amount,
    balance_after: r.balanceAfter,
    reference_type: r.referenceType ?? null,
    reference_id: r.referenceId ?? null,
    comment: r.comment ?? null,
    created_at: r.createdAt.toISOString(),
  };
}

/**
 * Changes a balance and appends its ledger row in the caller's transaction. The caller
 * must hold the account row locked (lockAccounts), so concurrent postings serialise and
 * balance = sum(ledger rows) holds after every commit.
 */
export function postToLedger(
  em: EntityManager,
  account: Account,
  amount: Dec,
  kind: LedgerKind,
  reference: { type: string; id: string | number },
  comment?: string | null,
): LedgerEntry {
  const rounded = money(amount);
  const balanceAfter = money(account.balance).plus(rounded);
  account.balance = balanceAfter.toFixed(2);
  return em.create(LedgerEntry, {
    account,
    kind,
    amount: rounded.toFixed(2),
    balanceAfter: balanceAfter.toFixed(2),
    referenceType: reference.type,
    referenceId: String(reference.id),
    comment: comment ?? null,
  });
}

export interface LedgerMismatch {
  login: string;
  balance: string;
  ledger_sum: string;
}

/** Accounts whose balance differs from the sum of their ledger rows: always empty, or something is broken. */
export async function findLedgerMismatches(em: EntityManager): Promise<LedgerMismatch[]> {
  return em.execute<LedgerMismatch[]>(
    `select a.login::text as login, a.balance::text as balance, coalesce(sum(l.amount), 0)::text as ledger_sum
       from accounts a left join ledger_entries l on l.account_id = a.id
      group by a.id having a.balance <> coalesce(sum(l.amount), 0)`,
  );
}
