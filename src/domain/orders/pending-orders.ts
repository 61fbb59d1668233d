import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { findPage, type Paging } from '../../db/find-page';
import { Account as AccountEntity, type Account } from '../../entities/account.entity';
import { Order } from '../../entities/order.entity';
import { PENDING_STATUSES, PendingOrder, type PendingStatus } from '../../entities/pending-order.entity';
import { dec, num, type Dec } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import type { QuoteStore } from '../prices/quote-store';
import { assertTradingAccount, lockAccounts } from '../accounts/accounts';
import type { DomainEvent } from '../../entities/domain-event.entity';
import { recordEvent } from '../events/outbox';
import type { EventType } from '../events/event-types';
import { assertCanOpen } from '../../platform/bounds';
import { countWaitingPendingOrders } from './positions';
import { PricingContext, PricingError } from '../prices/pricing-context';

/** cmd of pending orders. */
export const CMD = {
  BUY_LIMIT: 2,
  SELL_LIMIT: 3,
  BUY_STOP: 4,
  SELL_STOP: 5,
  BUY_STOP_LIMIT: 6,
  SELL_STOP_LIMIT: 7,
} as const;

export const isBuy = (cmd: number) => cmd === CMD.BUY_LIMIT || cmd === CMD.BUY_STOP || cmd === CMD.BUY_STOP_LIMIT;
export const isStopLimit = (cmd: number) => cmd === CMD.BUY_STOP_LIMIT || cmd === CMD.SELL_STOP_LIMIT;
/** Buy limit and sell stop (and sell stop limit) wait below the market; the others above it. */
const triggersBelowMarket = (cmd: number) => cmd === CMD.BUY_LIMIT || cmd === CMD.SELL_STOP || cmd === CMD.SELL_STOP_LIMIT;

export interface PendingPrices {
  trigger_price: number;
  limit_price?: number | null | undefined;
  sl?: number | null | undefined;
  tp?: number | null | undefined;
  trailing_stop?: number | null | undefined;
}

export interface NewPendingOrder extends PendingPrices {
  login: number;
  symbol: string;
  cmd: number;
  volume: number;
  expiry_at?: string | null | undefined;
  comment?: string | null | undefined;
}

export const PendingOrderSchema = z.object({
  order: z.int(),
  request_id: z.string(),
  login: z.int(),
  symbol: z.string(),
  cmd: z
    .int()
    .meta({ enum: [2, 3, 4, 5, 6, 7] })
    .describe('2 buy limit, 3 sell limit, 4 buy stop, 5 sell stop, 6 buy stop limit, 7 sell stop limit'),
  volume: z.number(),
  trigger_price: z.number(),
  sl: z.number().nullable(),
  tp: z.number().nullable(),
  expiry_at: z.iso.datetime().nullable(),
  comment: z.string().nullable(),
  status: z
    .enum(PENDING_STATUSES)
    .describe(
      'pending (waiting for its trigger); triggered (a stop-limit order resting at its limit_price); filled (filled_order is the new market order); cancelled (by its owner, or by the trading engine with cancel_reason); expired',
    ),
  created_at: z.iso.datetime(),
  triggered_at: z.iso.datetime().nullable().describe('When the market reached trigger_price'),
  filled_order: z.int().nullable().describe('Ticket of the market order the fill opened'),
  limit_price: z.number().nullable(),
  trailing_stop: z.number().nullable(),
  cancel_reason: z
    .string()
    .nullable()
    .describe(
      'Why the service cancelled it: `trading_disabled` (trading was disabled on the account), or `Not filled: ...` ' +
        '(a fill that failed the margin check or a limit of the group); null when its owner cancelled it',
    ),
});
export type PendingOrderView = z.output<typeof PendingOrderSchema>;

export function pendingOrderView(p: PendingOrder): PendingOrderView {
  return {
    order: Number(p.ticket),
    request_id: p.requestId,
    login: Number(p.login),
    symbol: p.symbol,
    cmd: p.cmd,
    volume: num(p.volume)!,
    trigger_price: num(p.triggerPrice)!,
    sl: num(p.sl),
    tp: num(p.tp),
    expiry_at: p.expiryAt?.toISOString() ?? null,
    comment: p.comment ?? null,
    status: p.status,
    created_at: p.createdAt.toISOString(),
    triggered_at: p.triggeredAt?.toISOString() ?? null,
    filled_order: p.filledOrder === null || p.filledOrder === undefined ? null : Number(p.filledOrder),
    limit_price: num(p.limitPrice),
    trailing_stop: num(p.trailingStop),
    cancel_reason: p.cancelReason ?? null,
  };
}

/** The pending_order.* event types: each one's data is the order's view (a modification's, before and after). */
export type PendingOrderEventType = Extract<EventType, `pending_order.${string}`>;

/**
 * Adds a pending order's event to the caller's unit of work: the one shape of every
 * pending_order.* event, keyed by the order's ticket, for the order's customer.
 */
export function recordPendingOrderEvent(
  em: EntityManager,
  type: PendingOrderEventType,
  order: PendingOrder,
  customerId: string,
  data: Record<string, unknown> = pendingOrderView(order),
): DomainEvent {
  return recordEvent(em, { type, aggregateType: 'pending_order', aggregateId: order.ticket, customerId, data });
}

/**
 * The price rules of a pending order, each failure at its own field:
 * - limit_price only on stop-limit orders, where it is required: below the trigger for a
 *   buy, above it for a sell;
 * - sl and tp around the price the order fills at (limit_price for stop-limit orders,
 *   trigger_price otherwise): for buys sl < price < tp, for sells tp < price < sl;
 * - trailing_stop > 0.
 */
export function checkPendingPrices(cmd: number, p: PendingPrices): void {
  const trigger = dec(p.trigger_price);
  if (isStopLimit(cmd)) {
    if (p.limit_price === undefined || p.limit_price === null)
      throw fieldError('body', ['limit_price'], 'A stop-limit order needs limit_price');
    const limit = dec(p.limit_price);
    if (isBuy(cmd) ? !limit.lt(trigger) : !limit.gt(trigger)) {
      throw fieldError('body', ['limit_price'], `limit_price must be ${isBuy(cmd) ? 'below' : 'above'} trigger_price`);
    }
  } else if (p.limit_price !== undefined && p.limit_price !== null) {
    throw fieldError('body', ['limit_price'], 'Only stop-limit orders (cmd 6 and 7) have a limit_price');
  }
  const price: Dec = isStopLimit(cmd) ? dec(p.limit_price!) : trigger;
  const buy = isBuy(cmd);
  if (p.sl !== undefined && p.sl !== null && (buy ? !dec(p.sl).lt(price) : !dec(p.sl).gt(price))) {
    throw fieldError('body', ['sl'], `sl must be ${buy ? 'below' : 'above'} ${price.toFixed()}`);
  }
  if (p.tp !== undefined && p.tp !== null && (buy ? !dec(p.tp).gt(price) : !dec(p.tp).lt(price))) {
    throw fieldError('body', ['tp'], `tp must be ${buy ? 'above' : 'below'} ${price.toFixed()}`);
  }
  if (p.trailing_stop !== undefined && p.trailing_stop !== null && !dec(p.trailing_stop).gt(0)) {
    throw fieldError('body', ['trailing_stop'], 'trailing_stop must be greater than 0', 'greater_than');
  }
}

/** A trigger must wait on the right side of the market: buys compare with the ask, sells with the bid. */
async function checkTriggerSide(
  em: EntityManager,
  quotes: QuoteStore,
  account: Account,
  symbol: string,
  cmd: number,
  trigger: number,
): Promise<void> {
  const pricing = await PricingContext.load(em, quotes, account, [symbol]);
  let market: Dec;
  try {
    const q = pricing.quote(symbol);
    market = isBuy(cmd) ? q.ask : q.bid;
  } catch (err) {
    if (err instanceof PricingError) throw fieldError('body', ['symbol'], err.message);
    throw err;
  }
  const below = triggersBelowMarket(cmd);
  if (below ? !dec(trigger).lt(market) : !dec(trigger).gt(market)) {
    throw fieldError(
      'body',
      ['trigger_price'],
      `trigger_price must be ${below ? 'below' : 'above'} the market (${market.toFixed()})`,
    );
  }
}

export async function createPendingOrder(
  em: EntityManager,
  quotes: QuoteStore,
  account: Account,
  input: NewPendingOrder,
): Promise<PendingOrder> {
  assertTradingAccount(account);
  checkPendingPrices(input.cmd, input);
  await checkTriggerSide(em, quotes, account, input.symbol, input.cmd, input.trigger_price);
  if (input.expiry_at && new Date(input.expiry_at).getTime() <= Date.now())
    throw fieldError('body', ['expiry_at'], 'expiry_at must be in the future');
  // The account row is locked while the position limit is counted, so racing placements take turns.
  return em.transactional(async (tx) => {
    const locked = (await lockAccounts(tx, [account.id])).get(account.id)!;
    const open = await tx.count(Order, { account: locked.id, status: 'open' });
    assertCanOpen(locked.balance, open + (await countWaitingPendingOrders(tx, locked.id)));
    return placePendingOrder(tx, locked, input);
  });
}

async function placePendingOrder(em: EntityManager, account: Account, input: NewPendingOrder): Promise<PendingOrder> {
  const order = em.create(PendingOrder, {
    requestId: randomUUID(),
    account,
    login: account.login,
    symbol: input.symbol,
    cmd: input.cmd,
    volume: dec(input.volume).toFixed(2),
    triggerPrice: dec(input.trigger_price).toFixed(),
    limitPrice: input.limit_price === undefined || input.limit_price === null ? null : dec(input.limit_price).toFixed(),
    sl: input.sl === undefined || input.sl === null ? null : dec(input.sl).toFixed(),
    tp: input.tp === undefined || input.tp === null ? null : dec(input.tp).toFixed(),
    trailingStop: input.trailing_stop === undefined || input.trailing_stop === null ? null : dec(input.trailing_stop).toFixed(),
    expiryAt: input.expiry_at ? new Date(input.expiry_at) : null,
    comment: input.comment ?? null,
  });
  await em.flush();
  await em.refresh(order);
  return order;
}

/**
 * The pending order `ticket` of `account`, locked, if its status is one of `statuses` (409
 * ORDER_NOT_PENDING otherwise); a ticket of another account is 404, as if absent.
 */
async function lockPendingOrder(
  tx: EntityManager,
  account: Account,
  ticket: number,
  statuses: readonly PendingStatus[],
): Promise<PendingOrder> {
  const order = await tx.findOne(
    PendingOrder,
    { ticket: String(ticket), account: account.id },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
  );
  if (!order) throw errors.notFound('Pending order');
  if (!statuses.includes(order.status))
    throw errors.conflict('ORDER_NOT_PENDING', `Order ${ticket} is ${order.status}, not ${statuses.join(' or ')}`);
  // Past its expiry an order is expired even before the expiry job has marked it.
  if (order.expiryAt && order.expiryAt.getTime() <= Date.now())
    throw errors.conflict('ORDER_NOT_PENDING', `Order ${ticket} has expired`);
  return order;
}

/**
 * Marks pending orders past their expiry as expired, each with its event, in one
 * transaction; run by a scheduled job. Returns how many expired.
 *
 * Lock order: the sweep locks only pending_orders rows, in ticket order, skipping rows another
 * transaction holds (the engine deciding one, its owner cancelling it: the next sweep takes
 * what is left). It never locks an account row: the customer ids are read unlocked afterwards.
 * (A populated FOR UPDATE would lock the joined account rows too, in scan order, against
 * transfers and placements locking accounts in id order: a deadlock.)
 */
export async function expireDuePendingOrders(em: EntityManager): Promise<number> {
  return em.transactional(async (tx) => {
    const due = await tx.find(
      PendingOrder,
      // A triggered stop-limit still rests as a limit order: it expires too (the engine leaves
      // every order past its expiry to this sweep).
      { status: { $in: ['pending', 'triggered'] }, expiryAt: { $lte: new Date() } },
      { lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE, orderBy: { ticket: 'asc' }, limit: 1000, refresh: true },
    );
    if (!due.length) return 0;
    const accounts = await tx.find(
      AccountEntity,
      { id: { $in: [...new Set(due.map((o) => o.account.id))] } },
      { fields: ['id', 'customer'] },
    );
    const customerOf = new Map(accounts.map((a) => [a.id, a.customer.id]));
    for (const order of due) {
      order.status = 'expired';
      order.updatedAt = new Date();
      recordPendingOrderEvent(tx, 'pending_order.expired', order, customerOf.get(order.account.id)!);
    }
    return due.length;
  });
}

export type PendingPatch = {
  sl?: number | null;
  tp?: number | null;
  trailing_stop?: number | null;
  trigger_price?: number;
  limit_price?: number | null;
};

/**
 * Endpoint 8: only the fields sent change (null clears sl, tp and trailing_stop); the
 * merged prices must pass every rule; a new trigger must sit on the right side of the market.
 */
export async function modifyPendingOrder(
  em: EntityManager,
  quotes: QuoteStore,
  account: Account,
  ticket: number,
  patch: PendingPatch,
): Promise<PendingOrder> {
  return em.transactional(async (tx) => {
    // Endpoint 8 works only while `pending`: a triggered stop-limit order is not modified.
    const order = await lockPendingOrder(tx, account, ticket, ['pending']);
    const merged: PendingPrices = {
      trigger_price: patch.trigger_price ?? num(order.triggerPrice)!,
      limit_price: 'limit_price' in patch ? patch.limit_price : num(order.limitPrice),
      sl: 'sl' in patch ? patch.sl : num(order.sl),
      tp: 'tp' in patch ? patch.tp : num(order.tp),
      trailing_stop: 'trailing_stop' in patch ? patch.trailing_stop : num(order.trailingStop),
    };
    checkPendingPrices(order.cmd, merged);
    if (patch.trigger_price !== undefined)
      await checkTriggerSide(tx, quotes, account, order.symbol, order.cmd, patch.trigger_price);
    const before = pendingOrderView(order);
    const text = (v: number | null | undefined) => (v === undefined || v === null ? null : dec(v).toFixed());
    if (patch.trigger_price !== undefined) order.triggerPrice = dec(patch.trigger_price).toFixed();
    if ('limit_price' in patch) order.limitPrice = text(patch.limit_price);
    if ('sl' in patch) order.sl = text(patch.sl);
    if ('tp' in patch) order.tp = text(patch.tp);
    if ('trailing_stop' in patch) order.trailingStop = text(patch.trailing_stop);
    order.updatedAt = new Date();
    recordPendingOrderEvent(tx, 'pending_order.modified', order, account.customer.id, { before, after: pendingOrderView(order) });
    return order;
  });
}

/**
 * Cancels an order that still waits: `pending`, or a stop-limit order `triggered` and resting
 * as a limit order at its limit price, which its owner may still withdraw. The engine decides
 * an order holding the same row lock, so a cancel and a fill never both happen.
 */
export async function cancelPendingOrder(em: EntityManager, account: Account, ticket: number): Promise<PendingOrder> {
  return em.transactional(async (tx) => {
    const order = await lockPendingOrder(tx, account, ticket, ['pending', 'triggered']);
    order.status = 'cancelled';
    order.updatedAt = new Date();
    recordPendingOrderEvent(tx, 'pending_order.cancelled', order, account.customer.id);
    return order;
  });
}

export async function listPendingOrders(em: EntityManager, account: Account, status: PendingStatus | undefined, paging: Paging) {
  const where = { account: account.id, ...(status ? { status } : {}) };
  return findPage(em, PendingOrder, where, paging, { orderBy: { ticket: 'desc' } }, pendingOrderView);
}

/** cancel_reason of the pending orders of an account whose trading was disabled. */
export const TRADING_DISABLED_REASON = 'trading_disabled';

/**
 * Cancels every waiting pending order (pending, or a triggered stop-limit) of these accounts
 * whose trading is disabled, with reason `trading_disabled`, one event each. Run after the
 * disabling committed, in a transaction of its own that locks only the orders (in ticket
 * order, as the engine locks one order before its account), so it cannot deadlock with a fill;
 * an order placed or decided meanwhile is caught by the engine, which cancels instead of
 * filling on a disabled account. Idempotent: a second run finds nothing waiting.
 */
export async function cancelPendingOfDisabledAccounts(em: EntityManager, accountIds: readonly string[]): Promise<number> {
  if (!accountIds.length) return 0;
  return em.transactional(async (tx) => {
    const orders = await tx.find(
      PendingOrder,
      { account: { $in: [...accountIds] }, status: { $in: ['pending', 'triggered'] } },
      { lockMode: LockMode.PESSIMISTIC_WRITE, orderBy: { ticket: 'asc' }, refresh: true },
    );
    if (!orders.length) return 0;
    const accounts = await tx.find(
      AccountEntity,
      { id: { $in: [...new Set(orders.map((o) => o.account.id))] }, tradingDisabled: true },
      { fields: ['id', 'customer'], refresh: true },
    );
    const customerOf = new Map(accounts.map((a) => [a.id, a.customer.id]));
    let cancelled = 0;
    for (const order of orders) {
      const customerId = customerOf.get(order.account.id);
      if (!customerId) continue;
      cancelPendingForDisabled(tx, order, customerId);
      cancelled++;
    }
    return cancelled;
  });
}

/** Marks one locked waiting order cancelled for `trading_disabled`, with its event. */
export function cancelPendingForDisabled(em: EntityManager, order: PendingOrder, customerId: string): void {
  order.status = 'cancelled';
  order.cancelReason = TRADING_DISABLED_REASON;
  order.updatedAt = new Date();
  recordPendingOrderEvent(em, 'pending_order.cancelled', order, customerId);
}
