import type { Dec } from '../../platform/decimal';
import { CMD, isBuy } from '../orders/pending-orders';
import { BUY, closingPrice } from '../prices/trading-math';

/** An account's quote of a symbol (its group's spread applied). */
export type Quote = { bid: Dec; ask: Dec };

/**
 * Whether a pending order fires at an account's quote: buy limit when
 * ask <= trigger, sell limit when bid >= trigger, buy stop when ask >= trigger, sell stop
 * when bid <= trigger; a triggered stop-limit order rests as a limit order at its limit price.
 */
export function pendingFires(cmd: number, status: 'pending' | 'triggered', trigger: Dec, limit: Dec | null, q: Quote): boolean {
  if (status === 'triggered') return isBuy(cmd) ? q.ask.lte(limit!) : q.bid.gte(limit!);
  switch (cmd) {
    case CMD.BUY_LIMIT:
      return q.ask.lte(trigger);
    case CMD.SELL_LIMIT:
      return q.bid.gte(trigger);
    case CMD.BUY_STOP:
    case CMD.BUY_STOP_LIMIT:
      return q.ask.gte(trigger);
    case CMD.SELL_STOP:
    case CMD.SELL_STOP_LIMIT:
      return q.bid.lte(trigger);
    default:
      return false;
  }
}

/** Which of sl and tp an open order hits at its account's quote: buys at bid, sells at ask. */
export function stopHit(cmd: number, sl: Dec | null, tp: Dec | null, q: Quote): 'sl' | 'tp' | null {
  const price = closingPrice(cmd, q);
  if (cmd === BUY) {
    if (sl && price.lte(sl)) return 'sl';
    if (tp && price.gte(tp)) return 'tp';
  } else {
    if (sl && price.gte(sl)) return 'sl';
    if (tp && price.lte(tp)) return 'tp';
  }
  return null;
}

/** Where a trailing stop puts sl now, or null when it would not move it forward. */
export function trailedStop(cmd: number, sl: Dec | null, distance: Dec, q: Quote): Dec | null {
  if (cmd === BUY) {
    const next = q.bid.minus(distance);
    return sl === null || next.gt(sl) ? next : null;
  }
  const next = q.ask.plus(distance);
  return sl === null || next.lt(sl) ? next : null;
}
