import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { Account } from '../../entities/account.entity';
import { Order } from '../../entities/order.entity';
import { PendingOrder } from '../../entities/pending-order.entity';
import { dec, type Dec } from '../../platform/decimal';
import { AppError, ValidationFailure } from '../../platform/errors';
import { databaseErrorSummary, isDatabaseError } from '../../platform/logger';
import { lockAccounts } from '../accounts/accounts';
import { accountView } from '../accounts/account-view';
import { recordEvent } from '../events/outbox';
import { metricsOf } from '../accounts/account-metrics';
import { closeAtPricing } from '../orders/close-order';
import { openMarketOrder } from '../orders/open-order';
import { CMD, isBuy, isStopLimit, pendingOrderView } from '../orders/pending-orders';
import { PricingContext, PricingError, type PricingTerms, type TradableQuote } from '../prices/pricing-context';
import { BUY, closingPrice, profitInQuoteCurrency } from '../prices/trading-math';
import type { QuoteStore } from '../prices/quote-store';

/** Candidates read per query: a tick that triggers more pages through them by ticket. */
const PAGE = 500;
/** Candidates processed at once in one pass (each in its own transaction). */
const PARALLEL = 4;

export interface TickOutcome {
  symbol: string;
  trailed: number;
  closed: { sl: number; tp: number };
  triggered: number;
  filled: number;
  cancelled: number;
  marginCalls: number;
  stoppedOut: number;
  /** Candidates (or a stage's lookup) that failed; the pass throws once the rest is done. */
  failed: number;
}

/** A pass's counts before it has done anything; also the start of a job's totals over its passes. */
export function noCounts(): Omit<TickOutcome, 'symbol'> {
  return {
    trailed: 0,
    closed: { sl: 0, tp: 0 },
    triggered: 0,
    filled: 0,
    cancelled: 0,
    marginCalls: 0,
    stoppedOut: 0,
    failed: 0,
  };
}

/** Adds a pass's counts to `totals` (a tick job's, over its passes). */
export function addCounts(totals: Omit<TickOutcome, 'symbol'>, pass: Omit<TickOutcome, 'symbol'>): void {
  totals.trailed += pass.trailed;
  totals.closed.sl += pass.closed.sl;
  totals.closed.tp += pass.closed.tp;
  totals.triggered += pass.triggered;
  totals.filled += pass.filled;
  totals.cancelled += pass.cancelled;
  totals.marginCalls += pass.marginCalls;
  totals.stoppedOut += pass.stoppedOut;
  totals.failed += pass.failed;
}

/** Why a candidate was or was not acted on. */
type PendingStep = 'filled' | 'triggered' | 'cancelled' | 'waiting' | 'gone' | 'unpriced';

type Quote = { bid: Dec; ask: Dec };

/**
 * Whether a pending order fires at an account's quote (decisions 12): buy limit when
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

type Stage = 'trail' | 'stops' | 'pending';

/**
 * How far any account's quote of a symbol can lie from the raw quote: half the widest group
 * spread (spreads are never negative), as `band.h`. The candidate lookups widen their bounds
 * by it, and each candidate is then decided at its own account's quote. Takes the symbol.
 */
const BAND_CTE = `with band as (select coalesce((select max(gi.spread) * power(10::numeric, -i.digits) / 2
  from instruments i join group_instruments gi on gi.instrument_id = i.id where i.symbol = ? group by i.digits), 0) as h)`;
const LOW = `(?::numeric - (select h from band))`;
const HIGH = `(?::numeric + (select h from band))`;
const LIVE = `(expiry_at is null or expiry_at > now())`;

/**
 * The lookups of a pass, each an index range bounded by the raw quote (each takes the symbol
 * and one side of the quote), in the order the pass acts on them: trailing stops (a buy's
 * moves once bid - distance > sl, a sell's once ask + distance < sl), then sl and tp (buys
 * close at bid: bid <= sl, bid >= tp; sells at ask: ask >= sl, ask <= tp), then pending
 * orders by watch class (see the Engine migration) and watch price.
 */
const BRANCHES: Array<{ stage: Stage; from: string; where: string; price: 'bid' | 'ask' }> = [
  {
    stage: 'trail',
    from: 'orders',
    where: `symbol = ? and status = 'open' and cmd = 0 and trailing_stop is not null and coalesce(sl + trailing_stop, 0) < ?`,
    price: 'bid',
  },
  {
    stage: 'trail',
    from: 'orders',
    where: `symbol = ? and status = 'open' and cmd = 1 and trailing_stop is not null and coalesce(sl - trailing_stop, 1e20) > ?`,
    price: 'ask',
  },
  {
    stage: 'stops',
    from: 'orders',
    where: `symbol = ? and status = 'open' and cmd = 0 and sl is not null and sl >= ${LOW}`,
    price: 'bid',
  },
  {
    stage: 'stops',
    from: 'orders',
    where: `symbol = ? and status = 'open' and cmd = 0 and tp is not null and tp <= ?`,
    price: 'bid',
  },
  {
    stage: 'stops',
    from: 'orders',
    where: `symbol = ? and status = 'open' and cmd = 1 and sl is not null and sl <= ${HIGH}`,
    price: 'ask',
  },
  {
    stage: 'stops',
    from: 'orders',
    where: `symbol = ? and status = 'open' and cmd = 1 and tp is not null and tp >= ?`,
    price: 'ask',
  },
  // 1: a buy the ask falls to; 2: a buy the ask rises to; 3: a sell the bid rises to; 4: a sell the bid falls to.
  { stage: 'pending', from: 'pending_orders', where: `symbol = ? and watch = 1 and watch_price >= ? and ${LIVE}`, price: 'ask' },
  {
    stage: 'pending',
    from: 'pending_orders',
    where: `symbol = ? and watch = 2 and watch_price <= ${HIGH} and ${LIVE}`,
    price: 'ask',
  },
  { stage: 'pending', from: 'pending_orders', where: `symbol = ? and watch = 3 and watch_price <= ? and ${LIVE}`, price: 'bid' },
  {
    stage: 'pending',
    from: 'pending_orders',
    where: `symbol = ? and watch = 4 and watch_price >= ${LOW} and ${LIVE}`,
    price: 'bid',
  },
];

/**
 * The one statement that finds a pass's candidates: the first page (PAGE + 1 tickets) of
 * every lookup, tagged with its branch. The bench's baseline sends it through `pg`.
 */
export function passLookup(symbol: string, bid: string, ask: string): { sql: string; params: string[] } {
  return {
    sql: `${BAND_CTE} ${BRANCHES.map(
      (b, i) =>
        `(select ${i} as branch, ticket from ${b.from} where ${b.where} and ticket > 0 order by ticket limit ${PAGE + 1})`,
    ).join(' union all ')}`,
    params: [symbol, ...BRANCHES.flatMap((b) => [symbol, b.price === 'bid' ? bid : ask])],
  };
}

/**
 * Runs `work` over `items`, at most `limit` at a time, and every item to the end: one item's
 * error stops neither its lane nor the others (each item is its own transaction), and the
 * returned promise settles only once every lane is done, so nothing still runs after it.
 * A failed item is handed to `failed` and its result is undefined.
 */
async function inParallel<T, R>(
  items: T[],
  limit: number,
  work: (item: T) => Promise<R>,
  failed: (item: T, err: unknown) => void,
): Promise<Array<R | undefined>> {
  const out: Array<R | undefined> = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      try {
        out[i] = await work(items[i]!);
      } catch (err) {
        failed(items[i]!, err);
      }
    }
  });
  await Promise.all(lanes);
  return out;
}

/**
 * Pages through the tickets an indexed query names after ticket `after`, `PAGE` at a time in
 * ticket order, and hands each page to `work`. The query takes the last ticket seen as its
 * final parameter.
 */
async function forCandidates(
  em: EntityManager,
  sql: string,
  params: unknown[],
  after: string,
  work: (tickets: string[]) => Promise<void>,
): Promise<void> {
  for (;;) {
    const rows = await em.execute<Array<{ ticket: string }>>(`${sql} and ticket > ? order by ticket limit ${PAGE}`, [
      ...params,
      after,
    ]);
    if (rows.length === 0) return;
    await work(rows.map((r) => String(r.ticket)));
    if (rows.length < PAGE) return;
    after = String(rows[rows.length - 1]!.ticket);
  }
}

/** The account's own quote of the symbol (its group's spread applied), or null when it has none. */
async function accountQuote(
  em: EntityManager,
  quotes: QuoteStore,
  account: Account,
  symbol: string,
): Promise<TradableQuote | null> {
  const pricing = await PricingContext.load(em, quotes, account, [symbol]);
  try {
    return pricing.quote(symbol);
  } catch (err) {
    if (err instanceof PricingError) return null;
    throw err;
  }
}

/**
 * Decides one pending order at the current quote, in one transaction that holds its row
 * locked: a second worker evaluating the same tick waits, then finds it no longer waiting.
 * A limit or stop order that fires fills at once as a market order (openMarketOrder, with
 * its margin check); a stop-limit order that fires becomes `triggered` and rests at its
 * limit price. A fill refused (margin, position or balance limit, sl or tp on the wrong side
 * of the fill price after a gap) cancels the order with the reason. Past its expiry an
 * order is left to the expiry sweep: expiry wins over a later tick.
 */
async function decidePendingOrder(em: EntityManager, quotes: QuoteStore, ticket: string): Promise<PendingStep> {
  return em.transactional(async (tx) => {
    const order = await tx.findOne(PendingOrder, { ticket }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!order || (order.status !== 'pending' && order.status !== 'triggered')) return 'gone';
    if (order.expiryAt && order.expiryAt.getTime() <= Date.now()) return 'gone';
    const account = await tx.findOneOrFail(Account, order.account.id, { populate: ['group'] });
    const q = await accountQuote(tx, quotes, account, order.symbol);
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
      recordEvent(tx, {
        type: 'pending_order.triggered',
        aggregateType: 'pending_order',
        aggregateId: order.ticket,
        customerId,
        data: pendingOrderView(order),
      });
      if (isStopLimit(order.cmd)) return 'triggered';
    }
    try {
      const position = await openMarketOrder(
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
        { fillsPendingOrder: true },
      );
      order.status = 'filled';
      order.filledOrder = position.ticket;
      order.updatedAt = new Date();
      recordEvent(tx, {
        type: 'pending_order.filled',
        aggregateType: 'pending_order',
        aggregateId: order.ticket,
        customerId,
        data: pendingOrderView(order),
      });
      return 'filled';
    } catch (err) {
      const refused = err instanceof ValidationFailure || (err instanceof AppError && err.status < 500);
      if (!refused) throw err;
      order.status = 'cancelled';
      order.cancelReason =
        `Not filled: ${err instanceof ValidationFailure ? err.items.map((i) => i.msg).join('; ') : err.message}`.slice(0, 255);
      order.updatedAt = new Date();
      recordEvent(tx, {
        type: 'pending_order.cancelled',
        aggregateType: 'pending_order',
        aggregateId: order.ticket,
        customerId,
        data: pendingOrderView(order),
      });
      return 'cancelled';
    }
  });
}

/**
 * Closes an open order whose sl or tp its account's quote has reached (reason `sl` or
 * `tp`), through closeAtPricing, which books the profit and writes order.closed once however
 * many workers try. Its row is locked first and the account second (the closing statement),
 * the order every close takes (see LOCK ORDER below).
 */
async function closeIfStopHit(em: EntityManager, quotes: QuoteStore, ticket: string): Promise<'sl' | 'tp' | null> {
  return em.transactional(async (tx) => {
    const order = await tx.findOne(Order, { ticket }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!order || order.status !== 'open') return null;
    const account = await tx.findOneOrFail(Account, order.account.id, { populate: ['group'] });
    const pricing = await PricingContext.load(tx, quotes, account, [order.symbol]);
    let q: TradableQuote;
    try {
      q = pricing.quote(order.symbol);
    } catch (err) {
      if (err instanceof PricingError) return null;
      throw err;
    }
    const hit = stopHit(order.cmd, order.sl ? dec(order.sl) : null, order.tp ? dec(order.tp) : null, q);
    if (!hit) return null;
    // At the quote that hit the stop, priced once: the locked order and its pricing go straight to the close.
    const outcome = await closeAtPricing(tx, order, pricing, hit);
    return outcome.kind === 'closed' && outcome.booked ? hit : null;
  });
}

/** Moves an open order's sl behind the price by its trailing stop, only ever forward (one conditional UPDATE). */
async function trailStop(em: EntityManager, quotes: QuoteStore, ticket: string): Promise<boolean> {
  const order = await em.findOne(Order, { ticket }, { refresh: true });
  if (!order || order.status !== 'open' || !order.trailingStop) return false;
  const account = await em.findOneOrFail(Account, order.account.id, { populate: ['group'] });
  const q = await accountQuote(em, quotes, account, order.symbol);
  if (!q) return false;
  const next = trailedStop(order.cmd, order.sl ? dec(order.sl) : null, dec(order.trailingStop), q);
  if (!next) return false;
  const forward = order.cmd === BUY ? 'sl < ?' : 'sl > ?';
  const moved = await em.execute(
    `update orders set sl = ?, updated_at = now() where ticket = ? and status = 'open' and (sl is null or ${forward})`,
    [next.toFixed(), ticket, next.toFixed()],
    'run',
  );
  return Number((moved as { affectedRows?: number }).affectedRows ?? 0) === 1;
}

interface MarginOutcome {
  marginCall: boolean;
  stoppedOut: string[];
}

/**
 * LOCK ORDER. Every close locks the order's row before its account's: the one closing
 * statement updates the order, then the balance (a manual close, a bulk-close ticket, sl and
 * tp). The stop-out follows it: it locks all the account's open orders, in ticket order,
 * before the account, so it can never hold the account while waiting for an order a
 * concurrent close holds (that would be a deadlock). A pending order's fill locks the pending
 * row, then the account, and only inserts into orders.
 *
 * Margin level = equity / margin x 100 (decisions 12), with the account locked. Below the
 * group's margin_call_level the account gets one `account.margin_call` per crossing (a
 * flag on the account, cleared when the level is back at or above it, or by
 * openMarketOrder when it opens on an account with nothing open); below its
 * stopout_level its most losing open order is closed (reason `stop_out`), again and again,
 * until the level is restored or nothing is open, and one `account.stop_out` names them.
 */
async function checkMargin(em: EntityManager, quotes: QuoteStore, accountId: string): Promise<MarginOutcome> {
  return em.transactional(async (tx) => {
    const outcome: MarginOutcome = { marginCall: false, stoppedOut: [] };
    await tx.execute(`select 1 from orders where account_id = ? and status = 'open' order by ticket for update`, [accountId]);
    if (!(await lockAccounts(tx, [accountId])).get(accountId)) return outcome;
    const account = await tx.findOneOrFail(Account, accountId, { populate: ['group'], refresh: true });
    const group = account.group?.getEntity();
    if (!group) return outcome;
    const callLevel = dec(group.marginCallLevel);
    const stopLevel = dec(group.stopoutLevel);
    // The level before this pass closed anything, and after (null: nothing left to margin).
    let firstLevel: Dec | null = null;
    let level: Dec | null = null;
    for (let round = 0; round < 10_000; round++) {
      level = null;
      const open = await tx.find(Order, { account: accountId, status: 'open' }, { refresh: true });
      if (open.length === 0) break;
      await tx.refresh(account);
      const pricing = await PricingContext.load(
        tx,
        quotes,
        account,
        open.map((o) => o.symbol),
      );
      const m = metricsOf(account, open, pricing);
      if (m.margin.lte(0)) break;
      level = m.equity.div(m.margin).times(100);
      firstLevel ??= level;
      if (level.gte(stopLevel)) break;
      const worst = mostLosing(open, pricing);
      if (!worst) break;
      // At the quotes this level was measured with.
      const closed = await closeAtPricing(
        tx,
        open.find((o) => o.ticket === worst)!,
        pricing,
        'stop_out',
      );
      if (closed.kind !== 'closed') break;
      outcome.stoppedOut.push(worst);
    }
    // The account row is locked and was read fresh above, flag included.
    const active = account.marginCallActive;
    outcome.marginCall = firstLevel !== null && firstLevel.lt(callLevel) && !active;
    // The flag stays up while the level is below the call level, and drops once it is back.
    const nowBelow = level !== null && level.lt(callLevel);
    if (nowBelow !== active) await tx.execute(`update accounts set margin_call_active = ? where id = ?`, [nowBelow, accountId]);
    if (outcome.marginCall || outcome.stoppedOut.length) {
      await tx.refresh(account);
      const view = await accountView(tx, quotes, account);
      if (outcome.marginCall)
        recordEvent(tx, {
          type: 'account.margin_call',
          aggregateType: 'account',
          aggregateId: account.login,
          customerId: account.customer.id,
          data: { ...view, margin_level: firstLevel!.toFixed(2), margin_call_level: callLevel.toNumber() },
        });
      if (outcome.stoppedOut.length)
        recordEvent(tx, {
          type: 'account.stop_out',
          aggregateType: 'account',
          aggregateId: account.login,
          customerId: account.customer.id,
          data: {
            ...view,
            margin_level: firstLevel!.toFixed(2),
            stopout_level: stopLevel.toNumber(),
            closed_orders: outcome.stoppedOut.map(Number),
          },
        });
    }
    return outcome;
  });
}

/** How long the margin pre-check reuses an account's pricing terms (instruments, group rows, conversions). */
const PRECHECK_TERMS_TTL_MS = 5_000;
const precheckTerms = new Map<string, { at: number; terms: Promise<PricingTerms> }>();

/**
 * Whether checkMargin has anything to do: the level (without locks, at current quotes) is
 * below the group's margin call level, or the account's call flag is up and may need to drop.
 * Balance and open orders are read afresh; the pricing terms, which change only when staff
 * edit instruments or group rows, are reused for up to PRECHECK_TERMS_TTL_MS per account and
 * symbols. The locked check itself always reads them afresh.
 */
async function marginNeedsCheck(em: EntityManager, quotes: QuoteStore, accountId: string, callFlagUp: boolean): Promise<boolean> {
  if (callFlagUp) return true;
  const account = await em.findOne(Account, accountId, { populate: ['group'] });
  const group = account?.group?.getEntity();
  if (!account || !group) return false;
  const open = await em.find(Order, { account: accountId, status: 'open' });
  if (open.length === 0) return false;
  const symbols = [...new Set(open.map((o) => o.symbol))].sort();
  // Terms depend on the group, the account currency and the symbols only: accounts alike share them.
  const key = `${group.id}:${account.currency}:${symbols.join(',')}`;
  const now = Date.now();
  let hit = precheckTerms.get(key);
  if (!hit || now - hit.at >= PRECHECK_TERMS_TTL_MS) {
    for (const [k, e] of precheckTerms) if (now - e.at >= PRECHECK_TERMS_TTL_MS) precheckTerms.delete(k);
    hit = { at: now, terms: PricingContext.loadTerms(em, account, symbols) };
    hit.terms.catch(() => precheckTerms.delete(key));
    precheckTerms.set(key, hit);
  }
  const pricing = await PricingContext.load(em, quotes, account, symbols, await hit.terms);
  const m = metricsOf(account, open, pricing);
  return m.margin.gt(0) && m.equity.div(m.margin).times(100).lt(dec(group.marginCallLevel));
}

/** The open order with the lowest floating profit in the account currency (ties: the oldest ticket). */
function mostLosing(open: Order[], pricing: PricingContext): string | null {
  let worst: { ticket: string; profit: Dec } | null = null;
  for (const o of [...open].sort((a, b) => Number(a.ticket) - Number(b.ticket))) {
    let profit: Dec;
    try {
      const q = pricing.quote(o.symbol);
      const raw = profitInQuoteCurrency(o.cmd, dec(o.openPrice), closingPrice(o.cmd, q), dec(o.volume), dec(o.contractSize));
      profit = pricing.toAccountCurrency(raw, q.instrument.quoteCurrency);
    } catch (err) {
      if (err instanceof PricingError) continue;
      throw err;
    }
    if (!worst || profit.lt(worst.profit)) worst = { ticket: o.ticket, profit };
  }
  return worst?.ticket ?? null;
}

export interface EvaluateOptions {
  /** Where each failed candidate is logged. */
  logger: Logger;
  /** Called as the pass goes, often: between pages and after each account's margin (the caller extends its lease). */
  heartbeat?: () => Promise<void>;
}

/**
 * A pass in which some candidates (or a stage's lookup) failed, thrown once every other
 * candidate and the margin stage have run, so the job is retried. Its message names no
 * values (a database error is summarised), as BullMQ keeps it in Redis.
 */
export class EnginePassFailed extends Error {
  constructor(
    readonly outcome: TickOutcome,
    first: unknown,
  ) {
    const cause = isDatabaseError(first) ? databaseErrorSummary(first) : first instanceof Error ? first.message : String(first);
    super(`engine pass of ${outcome.symbol}: ${outcome.failed} step(s) failed, the first: ${cause}`);
    this.name = 'EnginePassFailed';
  }
}

/**
 * Evaluates one symbol at its latest quote: trailing stops, then sl and tp, then pending
 * orders, then the margin of every account holding the symbol. Each lookup is an indexed
 * range query bounded by the quote (widened by the widest group spread), so its cost
 * follows the number of orders the tick acts on, not the number resting. `heartbeat` is
 * called between pages and after each account of the margin stage (the caller extends its
 * lease, as often as it sees fit).
 *
 * Every candidate is decided in its own transaction, so one that fails (a deadlock, a lost
 * connection) is logged and counted, and the others, the later stages and above all the
 * margin stage still run; once everything is done the pass throws EnginePassFailed, so the
 * job is retried and the failed candidates are evaluated again.
 */
export async function evaluateSymbol(
  em: EntityManager,
  quotes: QuoteStore,
  symbol: string,
  { logger, heartbeat = async () => undefined }: EvaluateOptions,
): Promise<TickOutcome> {
  const out: TickOutcome = { symbol, ...noCounts() };
  const raw = await quotes.get(symbol);
  if (!raw) return out;
  const bid = dec(raw.bid).toFixed();
  const ask = dec(raw.ask).toFixed();
  const fork = () => em.fork() as EntityManager;
  let firstFailure: unknown;
  const failed = (stage: Stage | 'lookup' | 'margin', what: Record<string, string>) => (err: unknown) => {
    if (out.failed++ === 0) firstFailure = err;
    logger.error({ err, symbol, stage, ...what }, 'engine step failed; the pass will throw once the rest is done');
  };
  const ticketFailed = (stage: Stage) => (ticket: string, err: unknown) => failed(stage, { ticket })(err);

  // Every lookup of the pass, first pages in one round trip; a branch with more than a page
  // of candidates is then paged through on its own.
  const lookup = passLookup(symbol, bid, ask);
  let first: Array<{ branch: number; ticket: string }> = [];
  try {
    first = await em.execute<Array<{ branch: number; ticket: string }>>(lookup.sql, lookup.params);
  } catch (err) {
    failed('lookup', {})(err);
  }
  // A stage whose paging fails is counted as failed too; the stages after it still run.
  const run = async (stage: Stage, work: (tickets: string[]) => Promise<void>) => {
    try {
      for (const [i, b] of BRANCHES.entries()) {
        if (b.stage !== stage) continue;
        const tickets = first.filter((r) => Number(r.branch) === i).map((r) => String(r.ticket));
        if (tickets.length === 0) continue;
        // The lookup read one ticket past a page to know there are more: work the page, then
        // go on after its last ticket (not from the start, which would work the page twice).
        const page = tickets.slice(0, PAGE);
        await work(page);
        if (tickets.length > PAGE)
          await forCandidates(
            em,
            `${BAND_CTE} select ticket from ${b.from} where ${b.where}`,
            [symbol, symbol, b.price === 'bid' ? bid : ask],
            page[page.length - 1]!,
            work,
          );
      }
    } catch (err) {
      failed(stage, { step: 'paging' })(err);
    }
  };

  await run('trail', async (tickets) => {
    const moved = await inParallel(tickets, PARALLEL, (t) => trailStop(fork(), quotes, t), ticketFailed('trail'));
    out.trailed += moved.filter(Boolean).length;
    await heartbeat();
  });
  await run('stops', async (tickets) => {
    for (const hit of await inParallel(tickets, PARALLEL, (t) => closeIfStopHit(fork(), quotes, t), ticketFailed('stops')))
      if (hit) out.closed[hit]++;
    await heartbeat();
  });
  await run('pending', async (tickets) => {
    for (const step of await inParallel(
      tickets,
      PARALLEL,
      (t) => decidePendingOrder(fork(), quotes, t),
      ticketFailed('pending'),
    )) {
      if (step === 'filled') out.filled++;
      else if (step === 'triggered') out.triggered++;
      else if (step === 'cancelled') out.cancelled++;
    }
    await heartbeat();
  });

  // Margin of every account holding the symbol: read without locks first, locked only when
  // the level is below the margin call level or the account's call flag is up. It runs
  // whatever failed above: a stop-out must not wait on another order's failure.
  try {
    const accounts = await em.execute<Array<{ id: string; margin_call_active: boolean }>>(
      `select a.id, a.margin_call_active from accounts a
        where a.id in (select distinct account_id from orders where symbol = ? and status = 'open')`,
      [symbol],
    );
    const outcomes = await inParallel(
      accounts,
      PARALLEL,
      async (a) => {
        const outcome = (await marginNeedsCheck(fork(), quotes, a.id, a.margin_call_active))
          ? await checkMargin(fork(), quotes, a.id)
          : null;
        // Every account holding the symbol is read, however many: the lease must outlast them.
        await heartbeat();
        return outcome;
      },
      (a, err) => failed('margin', { account_id: a.id })(err),
    );
    for (const outcome of outcomes) {
      if (!outcome) continue;
      if (outcome.marginCall) out.marginCalls++;
      out.stoppedOut += outcome.stoppedOut.length;
    }
  } catch (err) {
    failed('margin', { step: 'lookup' })(err);
  }
  if (out.failed > 0) throw new EnginePassFailed(out, firstFailure);
  return out;
}
