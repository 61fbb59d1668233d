import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { QuoteStore } from '../prices/quote-store';
import { addCounts, evaluateSymbol, noCounts, type TickOutcome } from './pass';
import type { TickBook } from './tick-book';

/** Passes one job runs at most before it hands the symbol on to a new tick job. */
export const MAX_PASSES_PER_JOB = 4;

/** What a tick job did: how many passes it ran and what they did, summed. */
export interface TickJobResult {
  symbol: string;
  /** The lease was taken when the job tried to take it: the holder evaluates the change. */
  coalesced: boolean;
  /** The job stopped at its bound with changes left and queued a tick job for them. */
  handedOn: boolean;
  passes: number;
  totals: Omit<TickOutcome, 'symbol'>;
}

export interface TickRunnerDeps {
  em: EntityManager;
  quotes: QuoteStore;
  book: TickBook;
  /** How long the symbol's lease lasts (WORKER_LOCK_MS): the job's work is bounded by half of it. */
  leaseMs: number;
  logger: Logger;
  /** Queues a new tick of the symbol, behind other symbols' ticks. */
  handOn: (symbol: string) => Promise<void>;
  /**
   * Runs beside each pass, once its lookup found accounts holding the symbol with an active
   * prop challenge (their ids), so what it decides does not wait for the pass's stages; the
   * change counts as done only once both are: a hook that fails fails the job, which is
   * retried and evaluates the change again.
   */
  onChallengeHolders?: (accountIds: string[]) => Promise<void>;
}

/**
 * Evaluates a symbol while it holds the symbol's lease in the tick book, from the latest
 * quote, until no change is left unevaluated; a tick arriving meanwhile finds the lease
 * taken and returns at once (coalesced: the holder evaluates its change next).
 *
 * A job's work is bounded: at most MAX_PASSES_PER_JOB passes, and no pass is started once
 * half the lease has gone. Under steady ticks a symbol whose pass is slower than its ticks
 * would otherwise keep one job (and a concurrency slot) forever, and keep shutdown waiting on
 * it. Stopped at the bound with changes left, the job releases the lease and then hands the
 * symbol on to a new tick job, which waits its turn behind other symbols' ticks: no change is
 * lost (and if queueing fails, this job fails and is retried; the sweep is the last net). The
 * lease is extended as the pass goes, at most every third of it.
 */
export async function runTicks(
  { em, quotes, book, leaseMs, logger, handOn, onChallengeHolders }: TickRunnerDeps,
  symbol: string,
): Promise<TickJobResult> {
  const started = Date.now();
  const result: TickJobResult = { symbol, coalesced: false, handedOn: false, passes: 0, totals: noCounts() };
  const withinBound = () => result.passes < MAX_PASSES_PER_JOB && Date.now() - started < leaseMs / 2;
  for (;;) {
    const token = randomUUID();
    // The lock, the symbol's state and its quote in one round trip; a pass's end and the
    // release (or the next quote) in another.
    const begun = await book.begin(symbol, token, leaseMs);
    if (!begun) return { ...result, coalesced: true };
    let { ver, done, quote } = begun;
    let extendedAt = Date.now();
    const heartbeat = async () => {
      if (Date.now() - extendedAt < leaseMs / 3) return;
      extendedAt = Date.now();
      if (!(await book.extend(symbol, token, leaseMs)))
        logger.warn({ symbol }, 'engine lease lapsed mid-pass; the database still guards each order');
    };
    let released = false;
    try {
      while (ver > done && withinBound()) {
        // A symbol never quoted has nothing to evaluate: the pass is done at once.
        if (quote) {
          addCounts(result.totals, await evaluateSymbol(em, quotes, symbol, { logger, heartbeat, quote, onChallengeHolders }));
          em.clear();
        }
        result.passes++;
        const finished = await book.finish(symbol, token, ver);
        done = ver;
        ({ ver, released, quote } = finished);
        // Released: no change came in since the pass began, and a tick arriving from now on takes the lock itself.
        if (released) return result;
      }
    } finally {
      if (!released) await book.unlock(symbol, token);
    }
    // Behind still: a change recorded between the last check and the unlock, or the bound was reached.
    ({ ver, done } = await book.state(symbol));
    if (ver <= done) return result;
    if (!withinBound()) {
      await handOn(symbol);
      return { ...result, handedOn: true };
    }
  }
}
