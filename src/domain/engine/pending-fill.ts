import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../entities/account.entity';
import { PendingOrder } from '../../entities/pending-order.entity';
import { dec, type Dec } from '../../platform/decimal';
import { fillPendingOrder } from '../orders/open-order';
import { CMD, cancelPendingForDisabled, isBuy, isStopLimit, recordPendingOrderEvent } from '../orders/pending-orders';
import { PricingContext } from '../prices/pricing-context';
import type { QuoteStore } from '../prices/quote-store';
import { pendingFires } from './rules';

/** Why a candidate was or was not acted on. */
export type PendingStep = 'filled' | 'triggered' | 'cancelled' | 'waiting' | 'gone' | 'unpriced';

/**
 * Decides one pending order at the current quote, in one transaction that holds its row
 * locked: a second worker evaluating the same tick waits, then finds it no longer waiting.
 * A limit or stop order that fires fills at once as a market order (fillPendingOrder, with
 * its margin check); a stop-limit order that fires becomes `triggered` and rests at its
 * limit price. A fill refused (margin, open position, exposure or balance limit, sl or tp on
 * the wrong side of the fill price after a gap) cancels the order with the reason. A limit
 * order (or a triggered stop-limit's limit) never fills worse than its limit price
 *: when the fill finds the market moved away, nothing is written and the order
 * keeps resting. Past its expiry an order is left to the expiry sweep: expiry wins over a
 * later tick.
 */
export async function decidePendingOrder(em: EntityManager, quotes: QuoteStore, ticket: string): Promise<PendingStep> {
  try {
    return await decide(em, quotes, ticket);
  } catch (err) {
    if (err instanceof KeepsResting) return 'waiting';
    throw err;
  }
}

/**
 * Thrown to roll back a decision whose fill would be worse than the order's limit: the
 * trigger, its event and the fill are undone together, and the order rests as it was.
 */
class KeepsResting extends Error {}

/** The price a limit order (and a triggered stop-limit order) never fills worse than; null for a stop order. */
function limitOf(order: PendingOrder, status: 'pending' | 'triggered'): Dec | null {
  if (status === 'triggered') return order.limitPrice ? dec(order.limitPrice) : null;
  if (order.cmd === CMD.BUY_LIMIT || order.cmd === CMD.SELL_LIMIT) return dec(order.triggerPrice);
  return null;
}

async function decide(em: EntityManager, quotes: QuoteStore, ticket: string): Promise<PendingStep> {
  return em.transactional(async (tx) => {
    const order = await tx.findOne(PendingOrder, { ticket }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!order || (order.status !== 'pending' && order.status !== 'triggered')) return 'gone';
    if (order.expiryAt && order.expiryAt.getTime() <= Date.now()) return 'gone';
    const account = await tx.findOneOrFail(Account, order.account.id, { populate: ['group'], refresh: true });
    // A disabled account's orders never fill, whatever the quote: the disabling's own sweep
    // may not have reached this one yet.
    if (account.tradingDisabled) {
      cancelPendingForDisabled(tx, order, account.customer.id);
      return 'cancelled';
    }
    // With the account's holdings, so the fill's free-margin check reuses this pricing.
    const pricing = await PricingContext.loadWithHoldings(tx, quotes, account, order.symbol);
    const q = pricing.quoteOrNull(order.symbol);
    if (!q) return 'unpriced';
    const status = order.status;
    if (!pendingFires(order.cmd, status, dec(order.triggerPrice), order.limitPrice ? dec(order.limitPrice) : null, q))
      return 'waiting';

    const now = new Date();
    const customerId = account.customer.id;
    if (status === 'pending') {
      order.triggeredAt = now;
      if (isStopLimit(order.cmd)) order.status = 'triggered';
      order.updatedAt = now;
      recordPendingOrderEvent(tx, 'pending_order.triggered', order, customerId);
      if (isStopLimit(order.cmd)) return 'triggered';
    }
    // At the quote that fired it, priced once: the fill reuses this pricing.
    const fill = await fillPendingOrder(
      tx,
      quotes,
      account,
      {
        login: Number(order.login),
        symbol: order.symbol,
        cmd: isBuy(order.cmd) ? 0 : 1,
        volume: Number(order.volume),
        sl: order.sl === null || order.sl === undefined ? null : Number(order.sl),
        tp: order.tp === null || order.tp === undefined ? null : Number(order.tp),
        trailing_stop: order.trailingStop === null || order.trailingStop === undefined ? null : Number(order.trailingStop),
        comment: order.comment ?? null,
      },
      pricing,
      limitOf(order, status),
    );
    // The market moved away from the limit between the decision and the fill (the fill read
    // the quotes again): the order keeps resting, as if this tick had not reached it.
    if (!fill.ok && fill.rest) throw new KeepsResting(fill.reason);
    if (fill.ok) {
      order.status = 'filled';
      order.filledOrder = fill.order.ticket;
    } else {
      order.status = 'cancelled';
      order.cancelReason = `Not filled: ${fill.reason}`.slice(0, 255);
    }
    order.updatedAt = new Date();
    recordPendingOrderEvent(tx, fill.ok ? 'pending_order.filled' : 'pending_order.cancelled', order, customerId);
    return fill.ok ? 'filled' : 'cancelled';
  });
}
