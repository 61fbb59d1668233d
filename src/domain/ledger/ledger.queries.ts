import { namedStatement } from '../../platform/named-sql';

/**
 * Accounts whose balance or credit differs from the sum of that bucket's ledger rows, one row
 * per account and bucket out of balance: always empty, or something is broken.
 */
export const LEDGER_MISMATCHES = namedStatement<Record<string, never>>(
  `select login, bucket, held::text as balance, ledger_sum::text as ledger_sum from (
     select a.login::text as login, a.balance, a.credit,
            coalesce(sum(l.amount) filter (where l.bucket = 'balance'), 0) as balance_sum,
            coalesce(sum(l.amount) filter (where l.bucket = 'credit'), 0) as credit_sum
       from accounts a left join ledger_entries l on l.account_id = a.id
      group by a.id) s
   cross join lateral (values ('balance', s.balance, s.balance_sum), ('credit', s.credit, s.credit_sum)) v(bucket, held, ledger_sum)
   where held <> ledger_sum`,
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

/**
 * The commission and swap booked for orders (rows referencing them by ticket), summed per
 * order as they hit the balance; an order with none has no row. `tickets` is a JSON array of text.
 */
export const ORDER_CHARGES = namedStatement<{ tickets: string }>(
  `select reference_id as ticket,
          coalesce(sum(amount) filter (where kind = 'commission'), 0)::numeric(38,2)::text as commission,
          coalesce(sum(amount) filter (where kind = 'swap'), 0)::numeric(38,2)::text as swap
     from ledger_entries
    where reference_type = 'order' and reference_id in (select jsonb_array_elements_text(:tickets::jsonb)) and kind in ('commission', 'swap')
    group by reference_id`,
);
