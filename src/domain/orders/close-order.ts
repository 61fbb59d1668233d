import type { EntityManager } from '@mikro-orm/postgresql';
import { Order } from '../../entities/order.entity';
import { executeBound, executeBoundInTransaction } from '../../db/bound-statement';
import type { RunBound } from '../../db/bound-transaction';
import { dec, money, type Dec } from '../../platform/decimal';
import { errors } from '../../platform/errors';
import { namedStatement, type Statement } from '../../platform/named-sql';
import type { QuoteStore } from '../prices/quote-store';
import { eventInsertSql } from '../events/outbox';
import { ledgerInsertSql } from '../ledger/ledger';
import {
  afterPosting,
  balanceUpdateSql,
  hasPostingHooks,
  postingIdleGuards,
  postingStatementParts,
  referredSql,
  type AccountAsRead,
  type InstalledIdleGuard,
  type InstalledStatementPart,
  type Posting,
  type PostedAccount,
} from '../ledger/posting';
import { CLOSE_HOLDER_AND_TERMS, orderCloseSql } from './orders.queries';
import { orderView, viewsOf, type ClosableOrder, type OrderView } from './order-view';
import { PricingContext, PricingError, type PricingTerms } from '../prices/pricing-context';
import { termsOfRows, type TermsRow } from '../prices/pricing-terms';
import { closingPrice, profitInQuoteCurrency } from '../prices/trading-math';

/**
 * The account a close is priced for, as read before the closing statement and without its lock:
 * what pricing needs (currency, group), and what tells the hooks whether they have work for the
 * close (AccountAsRead: its credit, whether its customer trades under a partner).
 */
export interface CloseHolder extends AccountAsRead {
  id: string;
  currency: string;
  groupId: string | null;
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
  holder_id: string;
  holder_currency: string;
  holder_group_id: string | null;
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
    id: first.holder_id,
    currency: first.holder_currency,
    groupId: first.holder_group_id,
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

/** What the closing statement answers: whether it closed the order, and the order's booked commission and swap after it. */
export interface ClosedRow {
  booked: number;
  commission: string;
  swap: string;
  /** The account as the close left it (null when nothing was booked). */
  account: PostedAccount | null;
  /** What the hooks' statement parts answered, by hook name (null when no hook adds one). */
  answers: Record<string, unknown> | null;
  /**
   * True when a guarded statement (guardedCloseStatement) found the open order's account, under
   * the lock, with work for a hook, and so changed nothing; false otherwise.
   */
  held: boolean;
}

/** What the closing statement writes, by name. */
export interface CloseParams {
  ticket: string;
  closed_at: Date;
  /** Decimal text. */
  close_price: string;
  /** In the account currency, two decimals: added to the balance and booked in the ledger. */
  profit: string;
  /** The closing commission as it hits the balance (negative or "0.00"), booked as its own row when not zero. */
  commission: string;
  reason: string;
  /** The order.closed event's data (the closed order's view), as JSON text. */
  event: string;
  /** The bulk close run whose item this close decides, or null for a single close. */
  bulk_close_run_id: string | null;
}

/**
 * The first CTEs of a guarded statement, or of one whose parts run CTEs before the booking: the
 * open order locked (first, as every close locks it; with the close's time as `closed_at`), then
 * its account (id, credit), only while `conditions` hold (the idle guards that stand alone: a
 * row lock re-reads the row and re-checks them when it changed since the statement's start);
 * then the parts' `before` CTEs, which read both. `o` then closes the order only when the
 * account was locked so, and while the guards that ride with their parts hold.
 */
const lockCtes = (conditions: readonly string[], before: readonly string[]) => `lo as (
  select account_id, ticket, symbol, cmd, volume, created_at, :closed_at::timestamptz as closed_at
    from orders where ticket = :ticket and status = 'open' for update
), la as (
  select a.id, a.credit from accounts a
   where a.id = (select account_id from lo)${conditions.map((c) => `\n     and (${c})`).join('')}
     for update of a
)${before.map((b) => `,\n${b}`).join('')}, `;

/** A guarded statement that found the order open and booked nothing: a hook has work its statement cannot do. */
const HELD = 'exists (select 1 from lo) and not exists (select 1 from o)';

/** What a statement's first CTEs lock and check before the booking (lockCtes), or null for a close that needs none. */
interface Locking {
  conditions: readonly string[];
  before: readonly string[];
  /** Conditions on the parts' `before` CTEs, under which `o` closes. */
  closeWhen: readonly string[];
}

const closeCtes = (locking: Locking | null) => `
with ${locking ? lockCtes(locking.conditions, locking.before) : ''}o as (
  ${orderCloseSql(locking ? ['exists (select 1 from la)', ...locking.closeWhen.map((c) => `(${c})`)].join(' and ') : undefined)}
), a as (
  ${balanceUpdateSql({
    delta: ':profit::numeric + :commission::numeric',
    at: 'now()',
    where: 'id = (select account_id from o)',
    returning: 'id, balance, credit, customer_id, login, kind, currency, reserved, group_id',
  })}
), l as (
  ${ledgerInsertSql([
    {
      id: 'gen_random_uuid()',
      bookedAt: 'now()',
      accountId: 'a.id',
      kind: 'trade_profit',
      amount: ':profit::numeric',
      balanceAfter: 'a.balance - :commission::numeric',
      referenceType: 'order',
      referenceId: ':ticket',
      comment: ':comment',
      from: 'a',
    },
    {
      id: 'gen_random_uuid()',
      bookedAt: 'now()',
      accountId: 'a.id',
      kind: 'commission',
      amount: ':commission::numeric',
      balanceAfter: 'a.balance',
      referenceType: 'order',
      referenceId: ':ticket',
      comment: "'Commission on the close of order ' || :ticket::text",
      from: 'a where :commission::numeric <> 0',
    },
  ])}
), s as (
  select (coalesce(sum(amount) filter (where kind = 'commission'), 0) + :commission::numeric)::numeric(38,2)::text as commission,
         coalesce(sum(amount) filter (where kind = 'swap'), 0)::numeric(38,2)::text as swap
    from ledger_entries
   where reference_type = 'order' and reference_id = :ticket::text and kind in ('commission', 'swap')
), e as (
  ${eventInsertSql({
    type: 'order.closed',
    aggregateType: 'order',
    aggregateId: ':ticket',
    customerId: 'a.customer_id',
    // The view's text with its last two fields appended, so the event keeps the REST order.
    data: `(left(:event::text, -1) || ',"commission":' || to_json(s.commission)::text || ',"swap":' || to_json(s.swap)::text || '}')::json`,
    at: 'now()',
    from: 'a cross join s',
  })}
)`;

type CloseBinding = CloseParams & { comment: string };

/** The order's commission and swap read as of the statement's start, plus this close's commission. */
const closed = (
  parts: readonly InstalledStatementPart[],
  guarded: boolean,
) => `select (select count(*) from o)::int as booked, s.commission, s.swap,
  (select json_build_object('id', id, 'login', login::text, 'customerId', customer_id, 'kind', kind, 'currency', currency,
          'balance', balance::text, 'credit', credit::text, 'reserved', reserved::text,
          'referred', ${referredSql('a.customer_id')}) from a) as account,
  ${parts.length === 0 ? 'null::json' : `json_build_object(${parts.map((p) => `'${p.hook}', (${p.answer})`).join(', ')})`} as answers,
  ${guarded ? HELD : 'false'} as held
  from s`;

const withParts = (parts: readonly InstalledStatementPart[]) => parts.map((p) => `,\n${p.ctes}`).join('');

/**
 * The single close's statement and the bulk close's (which also decides the run's item), with
 * the parts given; guarded by `guards` when given (a held statement leaves the item pending).
 */
function closeStatements(parts: readonly InstalledStatementPart[], guards: readonly InstalledIdleGuard[] | null) {
  const inStatement = new Set(parts.map((p) => p.hook));
  const riding = (g: InstalledIdleGuard) => g.withPart !== undefined && inStatement.has(g.hook);
  const before = parts.flatMap((p) => (p.before ? [p.before] : []));
  const locking: Locking | null =
    guards === null && before.length === 0
      ? null
      : {
          conditions: (guards ?? []).filter((g) => !riding(g)).map((g) => g.sql),
          before,
          closeWhen: (guards ?? []).filter(riding).map((g) => g.withPart!),
        };
  const ctes = closeCtes(locking);
  const answer = closed(parts, guards !== null);
  return {
    single: namedStatement<CloseBinding>(`${ctes}${withParts(parts)}
${answer}`),
    bulk: namedStatement<CloseBinding>(`${ctes}, i as (
  update bulk_close_items set status = 'closed', reason = null, finished_at = now()
  where run_id = :bulk_close_run_id and ticket = :ticket and status = 'pending'${guards ? `\n    and not (${HELD})` : ''}
  returning 1
)${withParts(parts)}
${answer}`),
  };
}

/** The statements by the parts they hold (hook names) and whether guarded, for the parts and guards installed last. */
let built:
  | {
      parts: readonly InstalledStatementPart[];
      guards: readonly InstalledIdleGuard[] | null;
      byHooks: Map<string, ReturnType<typeof closeStatements>>;
    }
  | undefined;

function statementOf(
  params: CloseParams,
  parts: readonly InstalledStatementPart[],
  guards: readonly InstalledIdleGuard[] | null,
) {
  const key = `${guards ? 'guarded:' : ''}${parts.map((p) => p.hook).join(',')}`;
  let statements = built!.byHooks.get(key);
  if (!statements) built!.byHooks.set(key, (statements = closeStatements(parts, guards)));
  const statement = params.bulk_close_run_id === null ? statements.single : statements.bulk;
  return statement.bind({ ...params, comment: `Close of order ${params.ticket}` });
}

function installedForClose() {
  const parts = postingStatementParts('order_close');
  const guards = postingIdleGuards('order_close');
  if (built?.parts !== parts || built.guards !== guards) built = { parts, guards, byHooks: new Map() };
  return { parts, guards };
}

/**
 * The one statement that closes an order if it is still open, books the profit and the
 * closing commission to the balance, appends their ledger rows (`trade_profit`, then
 * `commission` when not zero, both referencing the order) and the order.closed event, and
 * (for a bulk close) decides the run's item; it answers `booked` 1, or 0 when the order was no
 * longer open, with the order's booked commission and swap.
 * closeOrder runs it, and so does the bench's plain-`pg` baseline (bench/bulk-close.bench.ts).
 *
 * The installed `order_close` hooks' statement parts (PostingStatementPart) are folded in, so
 * their work costs the close no round trip; their answers come back as `answers`. A part may
 * read `o` (the closed order: account_id, ticket, symbol, cmd, volume, created_at, closed_at;
 * empty when the order was no longer open), `a` (the account row as the booking left it,
 * locked: id, balance, credit, customer_id, login, kind, currency, reserved, group_id), `e` (the
 * order.closed event's insert: a part's events read it first, to follow that event) and, in its
 * answer, `s` (the order's commission and swap with this close's, as text). A part's `before`
 * CTEs run ahead of the booking and may read `lo` (the order as still open, locked: account_id,
 * ticket, symbol, cmd, volume, created_at, and closed_at, this close's time) and `la` (the
 * account row locked: id, credit); its `ctes` may read them too. It sees the other tables as of
 * the statement's start, so what it must read current it reads through `a` or `la`, or under a
 * row lock of its own, taken after the account's. With `holder` (the account as the caller
 * read it), the parts that do not apply to it are left out.
 */
export function closeStatement(params: CloseParams, holder?: AccountAsRead): Statement {
  const { parts } = installedForClose();
  return statementOf(params, holder ? parts.filter((p) => p.applies(holder)) : parts, null);
}

/**
 * closeStatement for a close none of the `after` hooks has work for: the same statement, but it
 * books only while every hook's idle guard (PostingIdleGuard) holds for the account under its
 * lock, and otherwise changes nothing and answers `held`. A guarded hook's part is left out (a
 * guard that holds says it has nothing to do), unless its guard rides with it (`withPart`: the
 * part's work is then booked by this statement, and only its `after` would need the
 * transaction). Null when the close must run with its hooks: a hook has no guard, or one
 * expects work for `holder` (the account as the caller read it).
 */
export function guardedCloseStatement(params: CloseParams, holder?: AccountAsRead): Statement | null {
  const { parts, guards } = installedForClose();
  if (guards === null) return null;
  if (holder && guards.some((g) => g.likely && !g.likely(holder))) return null;
  const standing = new Set(guards.filter((g) => g.withPart === undefined).map((g) => g.hook));
  const rest = parts.filter((p) => !standing.has(p.hook) && (!holder || p.applies(holder)));
  return statementOf(params, rest, guards);
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
