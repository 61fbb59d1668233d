import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../entities/account.entity';
import { dec, money, type Dec } from '../../platform/decimal';
import { AppError, errors, fieldError, ValidationFailure } from '../../platform/errors';
import type { QuoteStore } from '../prices/quote-store';
import { metricsOf } from '../accounts/account-metrics';
import { tradingRefusal } from '../accounts/accounts';
import { openRefusal } from '../../platform/bounds';
import { termsOfRows } from '../prices/pricing-terms';
import { openStatements, type HoldingsAndTermsRow, type LockedAccountRow, type OpenParams } from './open-statements';
import { orderOfRow, orderView, type OrderCharges, type OrderFields, type OrderRow, type OrderView } from './order-view';
import { PricingContext, PricingError } from '../prices/pricing-context';
import { BUY, marginInQuoteCurrency, openingPrice } from '../prices/trading-math';
import { executeBoundInTransaction } from '../../db/bound-statement';
import { boundTransaction, type RunBound } from '../../db/bound-transaction';
import { SET_MARGIN_CALL_ACTIVE } from '../accounts/accounts.queries';
import { exposureRefusal } from './exposure';
import { beforePosting, postedCustomer, type PostedAccount, type Posting } from '../ledger/posting';
import type { CustomerScope } from '../../platform/customer-scope';

export interface NewMarketOrder {
  login: number;
  symbol: string;
  cmd: 0 | 1;
  volume: number;
  sl?: number | null | undefined;
  tp?: number | null | undefined;
  comment?: string | null | undefined;
  /** Only a filled pending order carries one. */
  trailing_stop?: number | null | undefined;
}

/** Checks sl and tp against the price: for buys sl < price < tp, for sells tp < price < sl. */
export function checkStops(cmdIsBuy: boolean, price: Dec, sl: number | null | undefined, tp: number | null | undefined): void {
  const refusal = stopsRefusal(cmdIsBuy, price, sl, tp);
  if (refusal) throw refusal;
}

/** Why checkStops refuses, as a value, or null. */
function stopsRefusal(
  cmdIsBuy: boolean,
  price: Dec,
  sl: number | null | undefined,
  tp: number | null | undefined,
): ValidationFailure | null {
  if (sl !== undefined && sl !== null) {
    const ok = cmdIsBuy ? dec(sl).lt(price) : dec(sl).gt(price);
    if (!ok) return fieldError('body', ['sl'], `sl must be ${cmdIsBuy ? 'below' : 'above'} ${price.toFixed()}`);
  }
  if (tp !== undefined && tp !== null) {
    const ok = cmdIsBuy ? dec(tp).gt(price) : dec(tp).lt(price);
    if (!ok) return fieldError('body', ['tp'], `tp must be ${cmdIsBuy ? 'above' : 'below'} ${price.toFixed()}`);
  }
  return null;
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
  /** The opening commission, a positive amount (or zero) in the account currency. */
  commission: Dec;
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
    commission: chargedCommission(input.commission),
    event: viewWithoutTicket(orderView(fields, openingCharges(input.commission))),
  };
}

/** A commission as it hits the balance: negative, two decimals ("0.00" when none). */
function chargedCommission(commission: Dec): string {
  return commission.isZero() ? '0.00' : commission.neg().toFixed(2);
}

/** What an order opened with `commission` has been charged: that commission, and no swap yet. */
export function openingCharges(commission: Dec): OrderCharges {
  return { commission: chargedCommission(commission), swap: '0.00' };
}

/** An account to open on: as a caller names it (by login; a customer only its own), or as the engine holds it. */
export type OpenOn = Account | { login: number; scope: CustomerScope };

/** An open the order rules refused: why (a filling pending order is cancelled with it), and the API's answer. */
export type OpenRefused = { ok: false; reason: string; error: AppError | ValidationFailure; rest?: true };
export type OpenResult = { ok: true; order: OrderFields; charges: OrderCharges } | OpenRefused;

function refused(error: AppError | ValidationFailure): OpenRefused {
  return {
    ok: false,
    reason: error instanceof ValidationFailure ? error.items.map((i) => i.msg).join('; ') : error.detail,
    error,
  };
}

/** A fill whose price would be worse than its limit: the pending order keeps resting. */
function keepsResting(price: Dec, limit: Dec): OpenRefused {
  return {
    ...refused(
      errors.conflict('PRICE_MOVED', `The market moved away: ${price.toFixed()} is worse than the limit ${limit.toFixed()}`),
    ),
    rest: true,
  };
}

/**
 * Opens a market order at the current quote after a free-margin check, in one
 * transaction that holds the account locked (two orders racing for the same free margin
 * take turns). A hot path: the transaction sends the three statements of openStatements
 * (find and lock the account; holdings and pricing terms; the order with its event) between
 * BEGIN and COMMIT, and reads the quotes from Redis while it holds the lock. It runs in a
 * bound transaction (`pg` on a pooled connection): the open reads and writes rows, never an
 * entity, so the ORM's transaction wrapper and unit of work would be pure cost. A login that is
 * not the customer's own is 404, as if absent; the wallet and a trading-disabled account are
 * refused as they are locked.
 */
export async function openMarketOrder(
  em: EntityManager,
  quotes: QuoteStore,
  on: OpenOn,
  input: NewMarketOrder,
): Promise<OrderView> {
  const result = await tryOpen(em, quotes, on, input);
  if (!result.ok) throw result.error;
  return orderView(result.order, result.charges);
}

/**
 * Fills a pending order as a market order on its (locked) account, at the pricing that
 * decided it fired: its quote is the fill price, and the free-margin check reuses it unless
 * the account holds a symbol it was not loaded for (a position opened meanwhile), when the
 * quotes are read again. A refusal (margin, position, exposure or balance limit, sl or tp on
 * the wrong side after a gap) is a result. With a `limit` (a limit order's, or a triggered
 * stop-limit's), a fill price worse than it is refused with `rest`: the order keeps resting.
 */
export function fillPendingOrder(
  em: EntityManager,
  quotes: QuoteStore,
  account: Account,
  input: NewMarketOrder,
  decided: PricingContext,
  limit: Dec | null = null,
): Promise<OpenResult> {
  return tryOpen(em, quotes, account, input, decided, limit);
}

async function tryOpen(
  em: EntityManager,
  quotes: QuoteStore,
  on: OpenOn,
  input: NewMarketOrder,
  decided?: PricingContext,
  limit: Dec | null = null,
): Promise<OpenResult> {
  const open = (run: RunBound) => openOnLocked(run, quotes, on, input, decided, limit);
  // The engine fills a pending order inside its own transaction: the open joins it.
  if (on instanceof Account) return em.transactional((tx) => open((statement) => executeBoundInTransaction(tx, statement)));
  return boundTransaction(em, open);
}

/**
 * The posting hooks' word on an open, as a refusal: the engine's fill of a pending order
 * records a refusal on the order instead of failing its whole transaction.
 */
async function postingRefusal(run: RunBound, posting: Posting): Promise<AppError | undefined> {
  try {
    await beforePosting(run, posting);
    return undefined;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
}

/** The open itself, its statements sent by `run` in one transaction; nothing of it is an entity. */
async function openOnLocked(
  run: RunBound,
  quotes: QuoteStore,
  on: OpenOn,
  input: NewMarketOrder,
  decided: PricingContext | undefined,
  limit: Dec | null,
): Promise<OpenResult> {
  const [locked] = await run<LockedAccountRow>(
    on instanceof Account ? openStatements.lockAccount(on.id) : openStatements.lockOwnAccount(on.login, on.scope),
  );
  if (!locked) throw errors.notFound('Account');
  const notTrading = tradingRefusal({ kind: locked.kind, tradingDisabled: locked.trading_disabled });
  if (notTrading) return refused(notTrading);
  const leverage = locked.leverage ?? locked.group_leverage ?? 1;
  const rows = await run<HoldingsAndTermsRow>(
    openStatements.holdingsAndTerms({ id: locked.id, currency: locked.currency, groupId: locked.group_id }, input.symbol),
  );
  const open = rows[0]?.open ?? [];
  // A filling pending order was already counted while it waited; it becomes this position.
  const waiting = (rows[0]?.waiting ?? 0) - (decided ? 1 : 0);
  const full = openRefusal(locked.balance, open.length + waiting);
  if (full) return refused(full);
  // The account row is locked and its open orders were read after the lock: racing opens take turns.
  const maxOpenPositions = locked.group_max_open_positions;
  if (maxOpenPositions !== null && open.length >= maxOpenPositions)
    return refused(
      errors.conflict(
        'TOO_MANY_POSITIONS',
        `The account holds ${open.length} open orders, the most its group allows (${maxOpenPositions})`,
      ),
    );
  const symbols = [...open.map((o) => o.symbol), input.symbol];
  const pricing = decided?.covers(symbols)
    ? decided
    : await PricingContext.priced(quotes, locked.currency, symbols, termsOfRows(rows));
  let quote;
  try {
    quote = pricing.quote(input.symbol);
  } catch (err) {
    if (err instanceof PricingError) return refused(fieldError('body', ['symbol'], err.message));
    throw err;
  }
  const price = openingPrice(input.cmd, quote);
  if (limit && (input.cmd === BUY ? price.gt(limit) : price.lt(limit))) return keepsResting(price, limit);
  const badStops = stopsRefusal(input.cmd === BUY, price, input.sl, input.tp);
  if (badStops) return refused(badStops);

  const volume = dec(input.volume);
  const contract = dec(quote.instrument.contractSize);
  let margin: Dec;
  let commission: Dec;
  try {
    margin = money(
      pricing.toAccountCurrency(marginInQuoteCurrency(volume, contract, price, leverage), quote.instrument.quoteCurrency),
    );
    commission = pricing.commission(input.symbol, volume, price);
  } catch (err) {
    if (err instanceof PricingError) return refused(fieldError('body', ['symbol'], err.message));
    throw err;
  }
  // The opening commission comes out of the balance with the open: free margin must cover both.
  const needed = margin.plus(commission);
  const metrics = metricsOf(locked, open, pricing, leverage);
  if (metrics.free_margin.lt(needed)) {
    const of = commission.isZero() ? '' : ` (${margin.toFixed(2)} of margin and ${commission.toFixed(2)} of commission)`;
    return refused(
      fieldError(
        'body',
        ['volume'],
        `Not enough free margin: the order needs ${needed.toFixed(2)} ${locked.currency}${of}, ${metrics.free_margin.toFixed(2)} is free`,
      ),
    );
  }
  if (locked.group_max_exposure !== null && locked.group_id !== null) {
    const over = await exposureRefusal(run, quotes, {
      groupId: locked.group_id,
      currency: locked.group_currency ?? locked.currency,
      max: dec(locked.group_max_exposure),
      net: locked.group_net_max_exposure === true,
      order: {
        symbol: input.symbol,
        cmd: input.cmd,
        volume,
        contractSize: contract,
        price,
        quoteCurrency: quote.instrument.quoteCurrency,
      },
    });
    if (over) return refused(over);
  }
  // The margin call flag (one call per crossing) is kept by the engine's margin
  // check, which only sees accounts holding the ticked symbol: one whose positions all closed
  // otherwise keeps it up, and its next crossing would send no call. With nothing open there
  // is no margin level; this position starts from above the call level. The account is locked
  // and its open orders were read after the lock, so a close in flight still counts as open.
  const opening = openingParams({
    account: { id: locked.id, login: locked.login, customerId: locked.customer_id },
    order: input,
    price,
    contractSize: quote.instrument.contractSize,
    openedAt: new Date(),
    commission,
  });
  const hooked = await postingRefusal(run, {
    flow: 'order_open',
    account: postedOf(locked),
    amount: opening.commission,
    reference: { type: 'order', id: opening.id },
    request: { ...input },
  });
  if (hooked) return refused(hooked);
  if (open.length === 0 && locked.margin_call_active)
    await run(SET_MARGIN_CALL_ACTIVE.bind({ account_id: locked.id, active: false }));
  const [inserted] = await run<OrderRow>(openStatements.open(opening));
  return { ok: true, order: orderOfRow(inserted!), charges: openingCharges(commission) };
}

/** The locked account as the posting hooks see it, with the customer its locking statement read. */
function postedOf(locked: LockedAccountRow): PostedAccount {
  return {
    id: locked.id,
    login: locked.login,
    customerId: locked.customer_id,
    kind: locked.kind,
    currency: locked.currency,
    balance: locked.balance,
    credit: locked.credit,
    reserved: locked.reserved,
    customer: postedCustomer(locked),
  };
}

/**
 * The new order's view as JSON text without its first field, the ticket, which the statement
 * puts in front once the row has one: the event keeps the REST view's field order.
 */
function viewWithoutTicket(view: OrderView): string {
  const { order: _order, ...rest } = view;
  return JSON.stringify(rest);
}
