import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Account } from '../../entities/account.entity';
import { LedgerEntry } from '../../entities/ledger-entry.entity';
import { accessibleAccount } from '../accounts/accounts';
import { LedgerSchema, ledgerView } from '../ledger/ledger';
import { CurrencyCode } from './money-text';

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

export interface TransactionQuery {
  login?: number | undefined;
  page: number;
  page_size: number;
}

/**
 * GET /customers/me/transactions: the ledger rows of the caller's accounts (or of one of
 * them), newest booking first. Another customer's login is 404, as if absent.
 */
export async function listCustomerTransactions(em: EntityManager, customerId: string, query: TransactionQuery) {
  const where =
    query.login === undefined
      ? { account: { customer: customerId } }
      : { account: (await accessibleAccount(em, query.login, customerId)).id };
  const [rows, total] = await em.findAndCount(LedgerEntry, where, {
    populate: ['account'],
    orderBy: { seq: 'desc' },
    limit: query.page_size,
    offset: (query.page - 1) * query.page_size,
  });
  return { items: rows.map(transactionView), page: query.page, page_size: query.page_size, total };
}
