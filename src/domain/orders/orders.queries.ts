import { namedStatement } from '../../platform/named-sql';
import { referredSql } from '../ledger/posting';
import { termsCtes } from '../prices/pricing-terms';

/** The advisory lock class of a group's exposure (any fixed int4; the group is the second key). */
export const EXPOSURE_LOCK_CLASS = 0x65787030;

/**
 * Opens in a group with a max_exposure take turns on this transaction-level lock, taken after
 * the account's row lock (the one order every open takes them in), so the exposure read next
 * sees every open committed before it.
 */
export const LOCK_GROUP_EXPOSURE = namedStatement<{ lock_class: number; group_id: string }>(
  `select pg_advisory_xact_lock(:lock_class::int, hashtext(:group_id::text))`,
);

/**
 * The open orders of a group's accounts per symbol: lots x contract size bought and sold
 * (decimal text), the volume-weighted open price (what a symbol without a quote counts at),
 * and the quote currency its notional is in.
 */
export const GROUP_EXPOSURE = namedStatement<{ group_id: string }>(
  `select o.symbol, i.quote_currency,
          coalesce(sum(o.volume * o.contract_size) filter (where o.cmd = 0), 0)::text as long_units,
          coalesce(sum(o.volume * o.contract_size) filter (where o.cmd = 1), 0)::text as short_units,
          (sum(o.volume * o.contract_size * o.open_price) / nullif(sum(o.volume * o.contract_size), 0))::text as open_price
     from orders o
     join accounts a on a.id = o.account_id
     join instruments i on i.symbol = o.symbol
    where a.group_id = :group_id::uuid and o.status = 'open'
    group by o.symbol, i.quote_currency`,
);

/*
 * The writes of the `orders` table, and the only ones: an order's insert, its close and its
 * stops. The opening and closing statements compose the first two as CTEs beside the balance
 * and ledger rows they book, so a column added to orders is added here once.
 */

/**
 * The insert of a new open order, as the body of a data-modifying CTE, from the named
 * parameters of OpenParams; returns the whole row (the ticket comes from its sequence).
 */
export const ORDER_INSERT_SQL = `insert into orders (id, created_at, updated_at, account_id, login, symbol, cmd, volume, open_price, contract_size,
                      sl, tp, comment, trailing_stop, status)
  values (:id, :opened_at, :opened_at, :account_id, :login, :symbol, :cmd, :volume, :open_price, :contract_size,
          :sl, :tp, :comment, :trailing_stop, 'open')
  returning *`;

/**
 * The close of an order that is still open, as the body of a data-modifying CTE, from the
 * named parameters of CloseParams; matches nothing when the order is no longer open, so a
 * ticket is closed once. Returns the order's account and what the hooks' statement parts read
 * of the closed order (see closeStatement). `condition`, SQL, narrows it further.
 */
export function orderCloseSql(condition?: string): string {
  let narrowed = '';
  if (condition !== undefined) narrowed = ` and ${condition}`;
  return `update orders set status = 'closed', closed_at = :closed_at, close_price = :close_price, profit = :profit,
    close_reason = :reason, bulk_close_run_id = :bulk_close_run_id, updated_at = now()
  where ticket = :ticket and status = 'open'${narrowed}
  returning account_id, ticket, symbol, cmd, volume, created_at, closed_at`;
}

/**
 * A trailing stop moves only forward (up for a buy, down for a sell) and only on an open
 * order: the condition in the statement, so a close or another move in between wins.
 */
export const TRAIL_BUY_STOP = namedStatement<{ ticket: string; sl: string }>(
  `update orders set sl = :sl, updated_at = now()
    where ticket = :ticket and status = 'open' and (sl is null or sl < :sl) returning 1`,
);

export const TRAIL_SELL_STOP = namedStatement<{ ticket: string; sl: string }>(
  `update orders set sl = :sl, updated_at = now()
    where ticket = :ticket and status = 'open' and (sl is null or sl > :sl) returning 1`,
);

/**
 * What a close reads before its statement, in one round trip: the account (currency, group,
 * credit, and whether its customer trades under a partner, referredSql), without a lock, and the
 * pricing terms (termsCtes) of the symbol for it, one row per terms row (one row with the
 * account alone when there are none).
 */
export const CLOSE_HOLDER_AND_TERMS = namedStatement<{ account_id: string; symbol: string }>(`
with holder as (
  select a.id, a.currency, a.group_id, a.credit::text as credit, ${referredSql('a.customer_id')} as referred
    from accounts a where a.id = :account_id::uuid
), wanted as (
  select id, quote_currency from instruments where symbol = :symbol::text
), ${termsCtes({ currency: '(select currency from holder)', groupId: '(select group_id from holder)' })}
select h.currency as holder_currency, h.credit as holder_credit,
       h.referred as holder_referred, t.*
  from holder h left join terms t on true`);
