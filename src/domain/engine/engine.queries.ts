import { namedStatement } from '../../platform/named-sql';

/** The accounts holding a symbol, with their margin call flag: those a tick of it may move. */
export const ACCOUNTS_HOLDING_SYMBOL = namedStatement<{ symbol: string }>(
  `select a.id, a.margin_call_active from accounts a
    where a.id in (select distinct account_id from orders where symbol = :symbol and status = 'open')`,
);

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
