import { namedStatement } from '../../platform/named-sql';

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
