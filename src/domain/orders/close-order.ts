import type { EntityManager } from '@mikro-orm/postgresql';
import { Order } from '../../entities/order.entity';
import { executeBound, executeBoundInTransaction } from '../../db/bound-statement';
import type { RunBound } from '../../db/bound-transaction';
import { dec, money, type Dec } from '../../platform/decimal';
import { errors } from '../../platform/errors';
import type { QuoteStore } from '../prices/quote-store';
import { afterPosting, hasPostingHooks, type AccountAsRead, type Posting } from '../ledger/posting';
import { CLOSE_HOLDER_AND_TERMS } from './orders.queries';
import { closeStatement, guardedCloseStatement, type CloseParams, type ClosedRow } from './close-statements';
import { orderView, viewsOf, type ClosableOrder, type OrderView } from './order-view';
import { PricingContext, PricingError, type PricingTerms } from '../prices/pricing-context';
import { termsOfRows, type TermsRow } from '../prices/pricing-terms';
import { closingPrice, profitInQuoteCurrency } from '../prices/trading-math';

/**
 * The account a close is priced for, as read before the closing statement and without its lock:
 * what pricing needs besides its terms (the currency), and what tells the hooks whether they have work for the
 * close (AccountAsRead: its credit, whether its customer trades under a partner).
 */
export interface CloseHolder extends AccountAsRead {
  currency: string;
  credit: string;
  referred: boolean;
}

/** Where a close gets the account it prices for and the pricing terms for a symbol. */
export type PricingSource = (
  em: EntityManager,
  accountId: string,
  symbol: string,
) => Promise<{ account: CloseHolder; terms: PricingTerms }>;

type HolderRow = TermsRow & {
  holder_currency: string;
  holder_credit: string;
  holder_referred: boolean;
};

/**
 * Reads them afresh, the account and its terms in one statement: what a single close and the
 * engine's sl and tp do.
 */
export const loadPricingTerms: PricingSource = async (em, accountId, symbol) => {
  const rows = await executeBound<HolderRow>(em, CLOSE_HOLDER_AND_TERMS.bind({ account_id: accountId, symbol }));
  const first = rows[0];
  if (!first) throw new Error(`account ${accountId} does not exist`);
  const account: CloseHolder = {
    currency: first.holder_currency,
    credit: first.holder_credit,
    referred: first.holder_referred,
  };
  return { account, terms: termsOfRows(rows) };
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
  if (order.status === 'closed') return { kind: 'closed', booked: false, view: (await viewsOf(em, [order]))[0]! };

  const { account: holder, terms } = await termsOf(em, accountId, order.symbol);
  const pricing = await PricingContext.priced(quotes, holder.currency, [order.symbol], terms);
  return closeAtPricing(em, order, pricing, reason, bulkCloseRunId, holder);
}

/**
 * Closes an open order at the quote `pricing` holds: for a caller that has priced the order
 * already to decide on the close (the engine's sl and tp), so the close books the very quote
 * that triggered it and nothing is read twice. The closing statement matches an open order only.
 * `holder`, the account as the caller read it, lets the statement leave out the hooks' parts
 * that have nothing to do for it (see PostingStatementPart); without it every part is in.
 */
export async function closeAtPricing(
  em: EntityManager,
  order: ClosableOrder,
  pricing: PricingContext,
  reason: string,
  bulkCloseRunId: string | null = null,
  holder?: AccountAsRead,
): Promise<CloseOutcome> {
  const ticket = order.ticket;
  let profit: Dec;
  let price: Dec;
  let commission: Dec;
  try {
    const quote = pricing.quote(order.symbol);
    price = closingPrice(order.cmd, quote);
    const raw = profitInQuoteCurrency(order.cmd, dec(order.openPrice), price, dec(order.volume), dec(order.contractSize));
    profit = money(pricing.toAccountCurrency(raw, quote.instrument.quoteCurrency));
    commission = pricing.commission(order.symbol, dec(order.volume), price);
  } catch (err) {
    if (err instanceof PricingError) return { kind: 'failed', reason: err.message };
    throw err;
  }
  const closedAt = new Date();
  // commission and swap are set by the statement, from the rows booked for the order.
  const view: OrderView = {
    ...orderView(order, { commission: '0.00', swap: '0.00' }),
    status: 'closed',
    closed_at: closedAt.toISOString(),
    close_price: Number(price.toFixed()),
    profit: profit.toFixed(2),
    close_reason: reason,
  };
  const params: CloseParams = {
    ticket,
    closed_at: closedAt,
    close_price: price.toFixed(),
    profit: profit.toFixed(2),
    commission: commission.isZero() ? '0.00' : commission.neg().toFixed(2),
    reason,
    event: viewWithoutCharges(view),
    bulk_close_run_id: bulkCloseRunId,
  };
  const amount = profit.minus(commission);
  const rows = await runClose(em, params, holder, ({ account, answers }) => ({
    flow: 'order_close',
    // The hooks see the account as the close found it, as every posting's hooks do.
    account: { ...account!, balance: dec(account!.balance).minus(amount).toFixed(2) },
    amount: amount.toFixed(2),
    reference: { type: 'order', id: ticket },
    answers: answers ?? {},
  }));
  const booked = Number(rows[0]?.booked ?? 0) === 1;
  if (!booked)
    return {
      kind: 'closed',
      booked,
      view: (await viewsOf(em, [await em.findOneOrFail(Order, { ticket }, { refresh: true })]))[0]!,
    };
  return { kind: 'closed', booked, view: { ...view, commission: rows[0]!.commission, swap: rows[0]!.swap } };
}

/**
 * Runs the closing statement. Without `after` hooks on closes the statement is its own
 * transaction. With them, a close none of them has work for (their idle guards, see
 * PostingIdleGuard, judged first on `holder`, the account as read before the close) is still
 * that one statement, which books only if the guards hold under the lock; otherwise, or when it
 * booked nothing for that reason (`held`), the close runs in one transaction with the hooks, so
 * what they book commits with it.
 *
 * The read of `holder` may be stale (a bulk close's run keeps it for a while, and any read is
 * taken before the lock): it only chooses which statement to try. What it says never decides
 * what is booked: the guarded statement checks every guard again on the locked row (a client
 * attributed to a partner since the read is held there and closed in the transaction), and in
 * the transaction a hook whose part was left out does its work itself.
 */
async function runClose(
  em: EntityManager,
  params: CloseParams,
  holder: AccountAsRead | undefined,
  posting: (row: ClosedRow) => Posting,
): Promise<ClosedRow[]> {
  if (!hasPostingHooks('after', 'order_close')) return executeBound<ClosedRow>(em, closeStatement(params, holder));
  const guarded = guardedCloseStatement(params, holder);
  if (guarded) {
    const rows = await executeBound<ClosedRow>(em, guarded);
    if (!rows[0]?.held) return rows;
  }
  const close = closeStatement(params, holder);
  return em.transactional(async (tx) => {
    const run: RunBound = (statement) => executeBoundInTransaction(tx, statement);
    const rows = await run<ClosedRow>(close);
    if (Number(rows[0]?.booked ?? 0) === 1) await afterPosting(run, posting(rows[0]!));
    return rows;
  });
}

/** POST /orders/{ticket}/close: a closed order is 409 ORDER_NOT_OPEN, no price 409 PRICE_UNAVAILABLE. */
export async function closeMarketOrder(em: EntityManager, quotes: QuoteStore, ticket: string): Promise<OrderView> {
  const outcome = await closeOrder(em, quotes, ticket, 'manual');
  if (outcome.kind === 'failed') throw errors.conflict('PRICE_UNAVAILABLE', outcome.reason);
  if (!outcome.booked) throw errors.conflict('ORDER_NOT_OPEN', `Order ${ticket} is already closed`);
  return outcome.view;
}

/**
 * The closed order's view as JSON text without its last two fields, commission and swap, which
 * the statement appends from the rows it books: the event keeps the REST view's field order.
 */
function viewWithoutCharges(view: OrderView): string {
  const { commission: _commission, swap: _swap, ...rest } = view;
  return JSON.stringify(rest);
}
