import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Account } from '../../entities/account.entity';
import { GroupInstrument } from '../../entities/group-instrument.entity';
import { Instrument } from '../../entities/instrument.entity';
import { Order } from '../../entities/order.entity';
import { executeBound } from '../../db/bound-statement';
import { D, dec, money, num, type Dec } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import { namedStatement, type Statement } from '../../platform/named-sql';
import type { QuoteStore } from '../prices/quote-store';
import { assertTradingAccount } from '../accounts/accounts';
import { assertCanOpen } from '../money/bounds';
import { MoneyText } from '../money/money-text';
import { openStatements, type HoldingsAndTermsRow, type LockedAccountRow, type OpenParams } from './open-statements';
import { PricingContext, PricingError, type PricingTerms } from './pricing-context';
import { BUY, closingPrice, marginInQuoteCurrency, openingPrice, profitInQuoteCurrency } from './trading-math';

export interface NewMarketOrder {
  login: number;
  symbol: string;
  cmd: 0 | 1;
  volume: number;
  sl?: number | null | undefined;
  tp?: number | null | undefined;
  comment?: string | null | undefined;
  /** Only a filled pending order carries one (decisions 12). */
  trailing_stop?: number | null | undefined;
}

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

function leverageOf(account: Account): number {
  return account.leverage ?? account.group?.getEntity().defaultLeverage ?? 1;
}

/** What the margin of an open position depends on. */
export type OpenPosition = Pick<Order, 'symbol' | 'cmd' | 'volume' | 'contractSize' | 'openPrice'>;

export interface AccountMetrics {
  balance: Dec;
  equity: Dec;
  margin: Dec;
  free_margin: Dec;
}

/**
 * Equity (balance plus floating profit) and margin of an account's open orders at current
 * quotes, in the account currency. An order whose symbol has no quote counts at its
 * opening price with no floating profit.
 */
export function metricsOf(
  account: Account,
  open: OpenPosition[],
  pricing: PricingContext,
  leverage: number = leverageOf(account),
): AccountMetrics {
  let floating = new D(0);
  let margin = new D(0);
  for (const o of open) {
    const volume = dec(o.volume);
    const contract = dec(o.contractSize);
    const quoteCurrency = pricing.instrument(o.symbol)?.quoteCurrency;
    let current: Dec = dec(o.openPrice);
    let profit = new D(0);
    try {
      const q = pricing.quote(o.symbol);
      current = closingPrice(o.cmd, q);
      profit = profitInQuoteCurrency(o.cmd, dec(o.openPrice), current, volume, contract);
    } catch (err) {
      if (!(err instanceof PricingError)) throw err;
    }
    if (!quoteCurrency) continue;
    let rate: Dec;
    try {
      rate = pricing.toAccountCurrency(new D(1), quoteCurrency);
    } catch (err) {
      if (!(err instanceof PricingError)) throw err;
      // Without its quote, a symbol whose base is the account currency (USDJPY on a USD
      // account) has no conversion either. Its own price is that rate: without this
      // fallback its margin counted as 0 and the free-margin check let new orders past it.
      if (pricing.instrument(o.symbol)?.baseCurrency !== account.currency) continue;
      rate = new D(1).div(current);
    }
    floating = floating.plus(profit.times(rate));
    margin = margin.plus(marginInQuoteCurrency(volume, contract, current, leverage).times(rate));
  }
  const balance = dec(account.balance);
  const equity = money(balance.plus(floating));
  const usedMargin = money(margin);
  return { balance, equity, margin: usedMargin, free_margin: equity.minus(usedMargin) };
}

export async function loadMetrics(em: EntityManager, quotes: QuoteStore, account: Account): Promise<AccountMetrics> {
  const open = await em.find(Order, { account: account.id, status: 'open' });
  // Most accounts (every wallet) hold no position: nothing to price.
  if (open.length === 0) {
    const balance = dec(account.balance);
    return { balance, equity: balance, margin: new D(0), free_margin: balance };
  }
  const pricing = await PricingContext.load(
    em,
    quotes,
    account,
    open.map((o) => o.symbol),
  );
  return metricsOf(account, open, pricing);
}

/** Checks sl and tp against the price: for buys sl < price < tp, for sells tp < price < sl. */
export function checkStops(cmdIsBuy: boolean, price: Dec, sl: number | null | undefined, tp: number | null | undefined): void {
  if (sl !== undefined && sl !== null) {
    const ok = cmdIsBuy ? dec(sl).lt(price) : dec(sl).gt(price);
    if (!ok) throw fieldError('body', ['sl'], `sl must be ${cmdIsBuy ? 'below' : 'above'} ${price.toFixed()}`);
  }
  if (tp !== undefined && tp !== null) {
    const ok = cmdIsBuy ? dec(tp).gt(price) : dec(tp).lt(price);
    if (!ok) throw fieldError('body', ['tp'], `tp must be ${cmdIsBuy ? 'above' : 'below'} ${price.toFixed()}`);
  }
}

/**
 * The opening statement's parameters from the locked account, the order asked for and the
 * price it trades at; openMarketOrder and the bench's plain `pg` baseline build them alike.
 * The event's data is the order's view with `order` 0: the statement sets the ticket it draws.
 */
export function openingParams(input: {
  account: { id: string; login: string; customerId: string };
  order: NewMarketOrder;
  price: Dec;
  contractSize: string;
  openedAt: Date;
}): OpenParams {
  const { account, order, openedAt } = input;
  const decimal = (v: number | null | undefined) => (v === undefined || v === null ? null : dec(v).toFixed());
  const fields: OrderFields = {
    ticket: '0',
    login: account.login,
    symbol: order.symbol,
    cmd: order.cmd,
    volume: dec(order.volume).toFixed(2),
    openPrice: input.price.toFixed(),
    sl: decimal(order.sl),
    tp: decimal(order.tp),
    comment: order.comment ?? null,
    status: 'open',
    createdAt: openedAt,
    closedAt: null,
    closePrice: null,
    profit: null,
    closeReason: null,
    trailingStop: decimal(order.trailing_stop),
  };
  return {
    id: randomUUID(),
    opened_at: openedAt,
    account_id: account.id,
    login: account.login,
    customer_id: account.customerId,
    symbol: fields.symbol,
    cmd: fields.cmd,
    volume: fields.volume,
    open_price: fields.openPrice,
    contract_size: input.contractSize,
    sl: fields.sl ?? null,
    tp: fields.tp ?? null,
    comment: fields.comment ?? null,
    trailing_stop: fields.trailingStop ?? null,
    event: JSON.stringify(orderView(fields)),
  };
}

/** The instrument rows of HOLDINGS_AND_TERMS as PricingTerms, the instruments and group rows as managed entities. */
function pricingTermsOf(tx: EntityManager, rows: HoldingsAndTermsRow[]): PricingTerms {
  const terms: PricingTerms = { instruments: [], rows: [], joining: [] };
  for (const row of rows) {
    if (row.id === null) continue;
    const instrumentColumns: Record<string, unknown> = {};
    const groupColumns: Record<string, unknown> = { instrument_id: row.id };
    for (const [name, value] of Object.entries(row)) {
      if (name.startsWith('gi_')) groupColumns[name.slice(3)] = value;
      else if (!HOLDINGS_COLUMNS.has(name)) instrumentColumns[name] = value;
    }
    const instrument = tx.map(Instrument, instrumentColumns);
    if (row.wanted) terms.instruments.push(instrument);
    if (row.joining) terms.joining.push(instrument);
    if (row.gi_group_id !== null) terms.rows.push(tx.map(GroupInstrument, groupColumns));
  }
  return terms;
}

const HOLDINGS_COLUMNS = new Set(['open', 'waiting', 'wanted', 'joining']);

/** An account to open on: as a caller names it (by login; a customer only its own), or as the engine holds it. */
export type OpenOn = Account | { login: number; customerId: string | undefined };

/**
 * Opens a market order at the current quote after a free-margin check, in one
 * transaction that holds the account locked (two orders racing for the same free margin
 * take turns). A hot path: the transaction sends the three statements of openStatements
 * (find and lock the account; holdings and pricing terms; the order with its event) between
 * BEGIN and COMMIT, and reads the quotes from Redis while it holds the lock. A login that is
 * not the customer's own is 404, as if absent; the wallet and a trading-disabled account are
 * refused as they are locked.
 */
export async function openMarketOrder(
  em: EntityManager,
  quotes: QuoteStore,
  on: OpenOn,
  input: NewMarketOrder,
  opts: { fillsPendingOrder?: boolean } = {},
): Promise<Order> {
  return em.transactional(async (tx) => {
    const lock =
      on instanceof Account ? openStatements.lockAccount(on.id) : openStatements.lockOwnAccount(on.login, on.customerId ?? null);
    const [row] = await tx.execute<LockedAccountRow[]>(lock.sql, lock.values);
    if (!row) throw errors.notFound('Account');
    const { group_leverage: groupLeverage, ...columns } = row;
    const locked = tx.map(Account, columns);
    assertTradingAccount(locked);
    // leverageOf would read the group, which is not loaded: its default leverage came with the row.
    const leverage = locked.leverage ?? groupLeverage ?? 1;
    const read = openStatements.holdingsAndTerms(
      { id: locked.id, currency: locked.currency, groupId: locked.group?.id ?? null },
      input.symbol,
    );
    const rows = await tx.execute<HoldingsAndTermsRow[]>(read.sql, read.values);
    const open = rows[0]?.open ?? [];
    // A filling pending order was already counted while it waited; it becomes this position.
    const waiting = (rows[0]?.waiting ?? 0) - (opts.fillsPendingOrder ? 1 : 0);
    assertCanOpen(locked.balance, open.length + waiting);
    const symbols = [...open.map((o) => o.symbol), input.symbol];
    const terms = pricingTermsOf(tx, rows);
    const pricing = await PricingContext.load(tx, quotes, locked, symbols, terms);
    let quote;
    try {
      quote = pricing.quote(input.symbol);
    } catch (err) {
      if (err instanceof PricingError) throw fieldError('body', ['symbol'], err.message);
      throw err;
    }
    const price = openingPrice(input.cmd, quote);
    checkStops(input.cmd === BUY, price, input.sl, input.tp);

    const volume = dec(input.volume);
    const contract = dec(quote.instrument.contractSize);
    let needed: Dec;
    try {
      needed = money(
        pricing.toAccountCurrency(marginInQuoteCurrency(volume, contract, price, leverage), quote.instrument.quoteCurrency),
      );
    } catch (err) {
      if (err instanceof PricingError) throw fieldError('body', ['symbol'], err.message);
      throw err;
    }
    const metrics = metricsOf(locked, open, pricing, leverage);
    if (metrics.free_margin.lt(needed)) {
      throw fieldError(
        'body',
        ['volume'],
        `Not enough free margin: the order needs ${needed.toFixed(2)} ${locked.currency}, ${metrics.free_margin.toFixed(2)} is free`,
      );
    }
    // The margin call flag (decisions 12: one call per crossing) is kept by the engine's margin
    // check, which only sees accounts holding the ticked symbol: one whose positions all closed
    // otherwise keeps it up, and its next crossing would send no call. With nothing open there
    // is no margin level; this position starts from above the call level. The account is locked
    // and its open orders were read after the lock, so a close in flight still counts as open.
    if (open.length === 0 && locked.marginCallActive)
      await tx.execute(`update accounts set margin_call_active = false where id = ?`, [locked.id]);
    const insert = openStatements.open(
      openingParams({
        account: { id: locked.id, login: locked.login, customerId: locked.customer.id },
        order: input,
        price,
        contractSize: quote.instrument.contractSize,
        openedAt: new Date(),
      }),
    );
    const [inserted] = await tx.execute<Array<Record<string, unknown>>>(insert.sql, insert.values);
    return tx.map(Order, inserted!);
  });
}

/** Where a close gets the account (with its group) and pricing terms for a symbol. */
export type PricingSource = (
  em: EntityManager,
  accountId: string,
  symbol: string,
) => Promise<{ account: Account; terms: PricingTerms }>;

/** Reads them afresh: what a single close does. */
export const loadPricingTerms: PricingSource = async (em, accountId, symbol) => {
  const account = await em.findOneOrFail(Account, accountId, { populate: ['group'] });
  return { account, terms: await PricingContext.loadTerms(em, account, [symbol]) };
};

export type CloseOutcome = { kind: 'closed'; booked: boolean; view: OrderView } | { kind: 'failed'; reason: string };

/**
 * Closes one order at the current quote. The order is read and priced without locks (an
 * open order's terms never change); then one statement closes it if it is still open,
 * books the profit (`balance = balance + profit`, so the account row is locked only for
 * that statement and the commit), appends the ledger row, writes the order.closed event,
 * and, for a bulk close, decides the run's item. An order closed meanwhile, by a retried
 * job or a racing bulk close, is matched by nothing and booked nothing: every ticket is
 * closed and booked exactly once.
 */
export async function closeOrder(
  em: EntityManager,
  quotes: QuoteStore,
  ticket: string,
  reason: string,
  bulkCloseRunId: string | null = null,
  termsOf: PricingSource = loadPricingTerms,
): Promise<CloseOutcome> {
  const order = await em.findOne(Order, { ticket }, { refresh: true });
  if (!order) return { kind: 'failed', reason: `Order ${ticket} does not exist` };
  return closeReadOrder(em, quotes, order, order.account.id, reason, bulkCloseRunId, termsOf);
}

/**
 * closeOrder once the order is read (by closeOrder, or by a bulk close's one read of its item
 * and order): prices it and runs the closing statement, which only matches an open order.
 */
export async function closeReadOrder(
  em: EntityManager,
  quotes: QuoteStore,
  order: ClosableOrder,
  accountId: string,
  reason: string,
  bulkCloseRunId: string | null,
  termsOf: PricingSource,
): Promise<CloseOutcome> {
  if (order.status === 'closed') return { kind: 'closed', booked: false, view: orderView(order) };

  const { account: holder, terms } = await termsOf(em, accountId, order.symbol);
  const pricing = await PricingContext.load(em, quotes, holder, [order.symbol], terms);
  return closeAtPricing(em, order, pricing, reason, bulkCloseRunId);
}

/**
 * Closes an open order at the quote `pricing` holds: for a caller that has priced the order
 * already to decide on the close (the engine's sl and tp), so the close books the very quote
 * that triggered it and nothing is read twice. The closing statement matches an open order only.
 */
export async function closeAtPricing(
  em: EntityManager,
  order: ClosableOrder,
  pricing: PricingContext,
  reason: string,
  bulkCloseRunId: string | null = null,
): Promise<CloseOutcome> {
  const ticket = order.ticket;
  let profit: Dec;
  let price: Dec;
  try {
    const quote = pricing.quote(order.symbol);
    price = closingPrice(order.cmd, quote);
    const raw = profitInQuoteCurrency(order.cmd, dec(order.openPrice), price, dec(order.volume), dec(order.contractSize));
    profit = money(pricing.toAccountCurrency(raw, quote.instrument.quoteCurrency));
  } catch (err) {
    if (err instanceof PricingError) return { kind: 'failed', reason: err.message };
    throw err;
  }
  const closedAt = new Date();
  const view: OrderView = {
    ...orderView(order),
    status: 'closed',
    closed_at: closedAt.toISOString(),
    close_price: Number(price.toFixed()),
    profit: profit.toFixed(2),
    close_reason: reason,
  };
  const close = closeStatement({
    ticket,
    closed_at: closedAt,
    close_price: price.toFixed(),
    profit: profit.toFixed(2),
    reason,
    event: JSON.stringify(view),
    bulk_close_run_id: bulkCloseRunId,
  });
  const rows = await executeBound<{ booked: number }>(em, close);
  const booked = Number(rows[0]?.booked ?? 0) === 1;
  return {
    kind: 'closed',
    booked,
    view: booked ? view : orderView(await em.findOneOrFail(Order, { ticket }, { refresh: true })),
  };
}

/** What the closing statement writes, by name. */
export interface CloseParams {
  ticket: string;
  closed_at: Date;
  /** Decimal text. */
  close_price: string;
  /** In the account currency, two decimals: added to the balance and booked in the ledger. */
  profit: string;
  reason: string;
  /** The order.closed event's data (the closed order's view), as JSON text. */
  event: string;
  /** The bulk close run whose item this close decides, or null for a single close. */
  bulk_close_run_id: string | null;
}

const CLOSE_CTES = `
with o as (
  update orders set status = 'closed', closed_at = :closed_at, close_price = :close_price, profit = :profit,
    close_reason = :reason, bulk_close_run_id = :bulk_close_run_id, updated_at = now()
  where ticket = :ticket and status = 'open'
  returning account_id
), a as (
  update accounts set balance = balance + :profit, updated_at = now() where id = (select account_id from o)
  returning id, balance, customer_id
), l as (
  insert into ledger_entries (id, created_at, updated_at, account_id, kind, amount, balance_after, reference_type, reference_id, comment)
  select gen_random_uuid(), now(), now(), a.id, 'trade_profit', :profit, a.balance, 'order', :ticket, :comment from a
  returning id
), e as (
  insert into domain_events (id, created_at, updated_at, type, aggregate_type, aggregate_id, customer_id, data)
  select gen_random_uuid(), now(), now(), 'order.closed' /* EventType */, 'order', :ticket, a.customer_id, :event::jsonb from a
  returning id
)`;

type CloseBinding = CloseParams & { comment: string };

const CLOSE = namedStatement<CloseBinding>(`${CLOSE_CTES}
select (select count(*) from l)::int as booked`);

/** The same, deciding the bulk close run's item in the same statement. */
const CLOSE_WITH_ITEM = namedStatement<CloseBinding>(`${CLOSE_CTES}, i as (
  update bulk_close_items set status = 'closed', reason = null, finished_at = now()
  where run_id = :bulk_close_run_id and ticket = :ticket and status = 'pending'
  returning 1
)
select (select count(*) from l)::int as booked`);

/**
 * The one statement that closes an order if it is still open, books the profit to the
 * balance, appends the ledger row and the order.closed event, and (for a bulk close)
 * decides the run's item; it answers `booked` 1, or 0 when the order was no longer open.
 * closeOrder runs it, and so does the bench's plain-`pg` baseline (bench/bulk-close.bench.ts).
 */
export function closeStatement(params: CloseParams): Statement {
  const statement = params.bulk_close_run_id === null ? CLOSE : CLOSE_WITH_ITEM;
  return statement.bind({ ...params, comment: `Close of order ${params.ticket}` });
}

/** POST /orders/{ticket}/close: a closed order is 409 ORDER_NOT_OPEN, no price 409 PRICE_UNAVAILABLE. */
export async function closeMarketOrder(em: EntityManager, quotes: QuoteStore, ticket: string): Promise<OrderView> {
  const outcome = await closeOrder(em, quotes, ticket, 'manual');
  if (outcome.kind === 'failed') throw errors.conflict('PRICE_UNAVAILABLE', outcome.reason);
  if (!outcome.booked) throw errors.conflict('ORDER_NOT_OPEN', `Order ${ticket} is already closed`);
  return outcome.view;
}
