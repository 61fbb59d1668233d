import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../entities/account.entity';
import { Order } from '../../entities/order.entity';
import { dec } from '../../platform/decimal';
import { closeAtPricing, loadPricingTerms } from '../orders/close-order';
import { PricingContext } from '../prices/pricing-context';
import { BUY } from '../prices/trading-math';
import type { QuoteStore } from '../prices/quote-store';
import { stopHit, trailedStop } from './rules';
import { executeNamed } from '../../db/bound-statement';
import { TRAIL_BUY_STOP, TRAIL_SELL_STOP } from '../orders/orders.queries';

/**
 * Closes an open order whose sl or tp its account's quote has reached (reason `sl` or
 * `tp`), through closeAtPricing, which books the profit and writes order.closed once however
 * many workers try. Its row is locked first and the account second (the closing statement),
 * the order every close takes (see LOCK ORDER below).
 */
export async function closeIfStopHit(em: EntityManager, quotes: QuoteStore, ticket: string): Promise<'sl' | 'tp' | null> {
  return em.transactional(async (tx) => {
    const order = await tx.findOne(Order, { ticket }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!order || order.status !== 'open') return null;
    // The account as every close reads it: what pricing needs, and what tells the close's hooks whether they have work.
    const { account, terms } = await loadPricingTerms(tx, order.account.id, order.symbol);
    const pricing = await PricingContext.priced(quotes, account.currency, [order.symbol], terms);
    const q = pricing.quoteOrNull(order.symbol);
    if (!q) return null;
    const hit = stopHit(order.cmd, order.sl ? dec(order.sl) : null, order.tp ? dec(order.tp) : null, q);
    if (!hit) return null;
    // At the quote that hit the stop, priced once: the locked order and its pricing go straight to the close.
    const outcome = await closeAtPricing(tx, order, pricing, hit, null, account);
    return outcome.kind === 'closed' && outcome.booked ? hit : null;
  });
}

/** Moves an open order's sl behind the price by its trailing stop, only ever forward (one conditional UPDATE). */
export async function trailStop(em: EntityManager, quotes: QuoteStore, ticket: string): Promise<boolean> {
  const order = await em.findOne(Order, { ticket }, { refresh: true });
  if (!order || order.status !== 'open' || !order.trailingStop) return false;
  const account = await em.findOneOrFail(Account, order.account.id, { populate: ['group'] });
  const q = (await PricingContext.load(em, quotes, account, [order.symbol])).quoteOrNull(order.symbol);
  if (!q) return false;
  const next = trailedStop(order.cmd, order.sl ? dec(order.sl) : null, dec(order.trailingStop), q);
  if (!next) return false;
  const trail = order.cmd === BUY ? TRAIL_BUY_STOP : TRAIL_SELL_STOP;
  const moved = await executeNamed(em, trail.bind({ ticket, sl: next.toFixed() }));
  return moved.length === 1;
}
