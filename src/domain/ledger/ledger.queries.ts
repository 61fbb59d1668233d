import { namedStatement } from '../../platform/named-sql';

/** Accounts whose balance differs from the sum of their ledger rows: always empty, or something is broken. */
export const LEDGER_MISMATCHES = namedStatement<Record<string, never>>(
  `select a.login::text as login, a.balance::text as balance, coalesce(sum(l.amount), 0)::text as ledger_sum
     from accounts a left join ledger_entries l on l.account_id = a.id
    group by a.id having a.balance <> coalesce(sum(l.amount), 0)`,
);

/**
 * What a customer deposited since a moment into its accounts of one currency (deposit rows:
 * the ledger is where deposits are recorded). Uses the (account, seq) index per account.
 */
export const DEPOSITED_SINCE = namedStatement<{ customer_id: string; currency: string; since: Date }>(
  `select coalesce(sum(l.amount), 0)::text as total
     from accounts a join ledger_entries l on l.account_id = a.id
    where a.customer_id = :customer_id and a.currency = :currency and l.kind = 'deposit' and l.created_at >= :since`,
);
