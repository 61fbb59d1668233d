import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { dec } from '../../platform/decimal';
import { databaseErrorSummary, isDatabaseError } from '../../platform/logger';
import type { Quote, QuoteStore } from '../prices/quote-store';
import { forStage, holdersLookup, passLookup, splitLookup, type FirstPageRow, type LookupRow, type Stage } from './candidates';
import { checkMargin, marginNeedsCheck, type MarginHolder } from './margin';
import { decidePendingOrder } from './pending-fill';
import { closeIfStopHit, trailStop } from './stops';
import { executeBound } from '../../db/bound-statement';

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

export interface EvaluateOptions {
  /** Where each failed candidate is logged. */
  logger: Logger;
  /** Called as the pass goes, often: between pages and after each account's margin (the caller extends its lease). */
  heartbeat?: () => Promise<void>;
  /** The symbol's latest quote, when the caller read it already (the tick book reads it with the lease); else read here. */
  quote?: Quote;
  /**
   * Runs beside the pass's stages, once its lookup has found them, for the accounts holding
   * the symbol with an active prop challenge (not called when there is none). The pass
   * settles only once it has, and throws its failure (after the pass's own, if any).
   */
  onChallengeHolders?: (accountIds: string[]) => Promise<void>;
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
  { logger, heartbeat = async () => undefined, quote, onChallengeHolders }: EvaluateOptions,
): Promise<TickOutcome> {
  const out: TickOutcome = { symbol, ...noCounts() };
  const raw = quote ?? (await quotes.get(symbol));
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

  // Every lookup of the pass, first pages and the accounts holding the symbol, in one round
  // trip (its values sent as parameters, not quoted into the text); a branch with more than a
  // page of candidates is then paged through on its own.
  const lookup = passLookup(symbol, bid, ask);
  let first: FirstPageRow[] = [];
  let holders: MarginHolder[] | undefined;
  try {
    ({ candidates: first, holders } = splitLookup(await executeBound<LookupRow>(em, { sql: lookup.sql, values: lookup.params })));
  } catch (err) {
    failed('lookup', {})(err);
  }
  const challengeHolders = (holders ?? []).filter((h) => h.challenge).map((h) => h.account_id);
  const hook =
    onChallengeHolders && challengeHolders.length > 0
      ? onChallengeHolders(challengeHolders).then(
          () => ({ ok: true as const }),
          (reason: unknown) => ({ ok: false as const, reason }),
        )
      : undefined;
  // A stage whose paging fails is counted as failed too; the stages after it still run.
  const run = async (stage: Stage, work: (tickets: string[]) => Promise<void>) => {
    try {
      await forStage(em, first, stage, { symbol, bid, ask }, work);
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
  // whatever failed above: a stop-out must not wait on another order's failure. The holders
  // (balance and open orders) came with the lookup; a pass that filled or closed an order
  // changed them (a fill makes its account a holder), so it reads them again, as does one
  // whose lookup failed.
  try {
    if (!holders || out.filled + out.closed.sl + out.closed.tp > 0) {
      const again = holdersLookup(symbol);
      holders = (await executeBound<{ holder: MarginHolder }>(em, { sql: again.sql, values: again.params })).map((r) => r.holder);
    }
    const outcomes = await inParallel(
      holders,
      PARALLEL,
      async (a) => {
        const outcome = (await marginNeedsCheck(em, quotes, a)) ? await checkMargin(fork(), quotes, a.account_id) : null;
        // Every account holding the symbol is read, however many: the lease must outlast them.
        await heartbeat();
        return outcome;
      },
      (a, err) => failed('margin', { account_id: a.account_id })(err),
    );
    for (const outcome of outcomes) {
      if (!outcome) continue;
      if (outcome.marginCall) out.marginCalls++;
      out.stoppedOut += outcome.stoppedOut.length;
    }
  } catch (err) {
    failed('margin', { step: 'lookup' })(err);
  }
  // Nothing of the pass runs on after it: the hook has settled before either failure is thrown.
  const hooked = await hook;
  if (out.failed > 0) throw new EnginePassFailed(out, firstFailure);
  if (hooked && !hooked.ok) throw hooked.reason;
  return out;
}
