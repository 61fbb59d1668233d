import { namedStatement } from '../../platform/named-sql';

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
