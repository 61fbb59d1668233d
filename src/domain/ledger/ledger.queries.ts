import { namedStatement } from '../../platform/named-sql';

/** Accounts whose balance differs from the sum of their ledger rows: always empty, or something is broken. */
export const LEDGER_MISMATCHES = namedStatement<Record<string, never>>(
  `select a.login::text as login, a.balance::text as balance, coalesce(sum(l.amount), 0)::text as ledger_sum
     from accounts a left join ledger_entries l on l.account_id = a.id
    group by a.id having a.balance <> coalesce(sum(l.amount), 0)`,
);
