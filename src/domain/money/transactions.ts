import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Account } from '../../entities/account.entity';
import { findPage, type Paging } from '../../db/find-page';
import { LedgerEntry } from '../../entities/ledger-entry.entity';
import { accessibleAccount } from '../accounts/accounts';
import { LedgerSchema, ledgerView } from '../ledger/ledger';
import { CurrencyCode } from '../../platform/money-text';

/** A ledger row as its customer sees it: the row, and the account it was booked on. */
export const TransactionSchema = LedgerSchema.extend({
  login: z.int(),
  currency: CurrencyCode,
});
export type TransactionView = z.output<typeof TransactionSchema>;

export function transactionView(row: LedgerEntry): TransactionView {
  const account: Account = row.account.getEntity();
  return { ...ledgerView(row), login: Number(account.login), currency: account.currency };
}

export interface TransactionQuery extends Paging {
  login?: number | undefined;
}

/**
 * GET /customers/me/transactions: the ledger rows of the caller's accounts (or of one of
 * them), newest booking first. Another customer's login is 404, as if absent.
 */
export async function listCustomerTransactions(em: EntityManager, customerId: string, query: TransactionQuery) {
  const where =
    query.login === undefined
      ? { account: { customer: customerId } }
      : { account: (await accessibleAccount(em, query.login, { customerId, staff: null })).id };
  return findPage(em, LedgerEntry, where, query, { populate: ['account'], orderBy: { seq: 'desc' } }, transactionView);
}
