import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { Order } from '../../entities/order.entity';
import { bookedCharges } from '../ledger/ledger';
import { num } from '../../platform/decimal';
import { MoneyText } from '../../platform/money-text';

/** A market order (a position), open or closed. */
export const OrderSchema = z.object({
  order: z.int().describe('Ticket'),
  login: z.int(),
  symbol: z.string(),
  cmd: z
    .int()
    .meta({ enum: [0, 1] })
    .describe('0 buy, 1 sell'),
  volume: z.number(),
  open_price: z.number(),
  sl: z.number().nullable(),
  tp: z.number().nullable(),
  comment: z.string().nullable(),
  status: z.enum(['open', 'closed']),
  opened_at: z.iso.datetime(),
  closed_at: z.iso.datetime().nullable(),
  close_price: z.number().nullable(),
  profit: MoneyText.nullable().describe('Booked profit in the account currency, decimal text'),
  close_reason: z.string().nullable().describe('manual, bulk_close, sl, tp or stop_out'),
  trailing_stop: z.number().nullable().describe('Distance in price the engine keeps sl behind a favourable price'),
  commission: MoneyText.describe(
    'Commission booked for this order so far (its open, and its close once closed), as it hit the balance: a charge is negative',
  ),
  swap: MoneyText.describe('Swap booked for this order so far, as it hit the balance: a charge is negative, a credit positive'),
});
export type OrderView = z.output<typeof OrderSchema>;

/** What a view of an order reads: an Order, or the fields of one about to be inserted. */
export type OrderFields = Pick<
  Order,
  | 'ticket'
  | 'login'
  | 'symbol'
  | 'cmd'
  | 'volume'
  | 'openPrice'
  | 'sl'
  | 'tp'
  | 'comment'
  | 'status'
  | 'createdAt'
  | 'closedAt'
  | 'closePrice'
  | 'profit'
  | 'closeReason'
  | 'trailingStop'
>;

/** What closing an order reads: its view's fields and its contract size (the entity, or the columns a bulk close reads with SQL). */
export type ClosableOrder = OrderFields & Pick<Order, 'contractSize'>;

/** An order's columns as a statement reads them. */
export interface OrderRow {
  ticket: string;
  login: string;
  symbol: string;
  cmd: 0 | 1;
  volume: string;
  open_price: string;
  contract_size: string;
  sl: string | null;
  tp: string | null;
  comment: string | null;
  status: 'open' | 'closed';
  created_at: string | Date;
  closed_at: string | Date | null;
  close_price: string | null;
  profit: string | null;
  close_reason: string | null;
  trailing_stop: string | null;
}

/** An order's columns as the fields its view and its close read (timestamps come as text through the ORM's driver). */
export function orderOfRow(r: OrderRow): ClosableOrder {
  return {
    ticket: r.ticket,
    login: r.login,
    symbol: r.symbol,
    cmd: r.cmd,
    volume: r.volume,
    openPrice: r.open_price,
    contractSize: r.contract_size,
    sl: r.sl,
    tp: r.tp,
    comment: r.comment,
    status: r.status,
    createdAt: new Date(r.created_at),
    closedAt: r.closed_at === null ? null : new Date(r.closed_at),
    closePrice: r.close_price,
    profit: r.profit,
    closeReason: r.close_reason,
    trailingStop: r.trailing_stop,
  };
}

/** The sums of an order's commission and swap ledger rows, signed as they hit the balance (decimal text). */
export interface OrderCharges {
  commission: string;
  swap: string;
}

export const NO_CHARGES: OrderCharges = { commission: '0.00', swap: '0.00' };

/**
 * The order's view; `charges` are its booked commission and swap (ledger rows referencing the
 * order), which the caller knows (an open, a close) or reads (orderCharges) for the order.
 */
export function orderView(o: OrderFields, charges: OrderCharges): OrderView {
  return {
    order: Number(o.ticket),
    login: Number(o.login),
    symbol: o.symbol,
    cmd: o.cmd,
    volume: num(o.volume)!,
    open_price: num(o.openPrice)!,
    sl: num(o.sl),
    tp: num(o.tp),
    comment: o.comment ?? null,
    status: o.status,
    opened_at: o.createdAt.toISOString(),
    closed_at: o.closedAt?.toISOString() ?? null,
    close_price: num(o.closePrice),
    profit: o.profit ?? null,
    close_reason: o.closeReason ?? null,
    trailing_stop: num(o.trailingStop),
    commission: charges.commission,
    swap: charges.swap,
  };
}

/** The views of orders read from the database, their booked commission and swap read in one statement. */
export async function viewsOf(em: EntityManager, orders: readonly OrderFields[]): Promise<OrderView[]> {
  const charges = await bookedCharges(
    em,
    orders.map((o) => o.ticket),
  );
  return orders.map((o) => orderView(o, charges.get(o.ticket) ?? NO_CHARGES));
}

/** A page of orders as views (see viewsOf). */
export async function orderViews<P extends { items: OrderFields[] }>(
  page: P,
  em: EntityManager,
): Promise<Omit<P, 'items'> & { items: OrderView[] }> {
  return { ...page, items: await viewsOf(em, page.items) };
}
