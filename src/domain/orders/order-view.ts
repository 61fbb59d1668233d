import { z } from 'zod';
import type { Order } from '../../entities/order.entity';
import { num } from '../../platform/decimal';
import { MoneyText } from '../money/primitives/money-text';

/** A market order (a position), open or closed. */
export const OrderSchema = z.object({
  order: z.int().describe('Ticket'),
  login: z.int(),
  symbol: z.string(),
  cmd: z.int().describe('0 buy, 1 sell'),
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

export function orderView(o: OrderFields): OrderView {
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
  };
}
