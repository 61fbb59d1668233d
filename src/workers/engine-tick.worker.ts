import { randomUUID } from 'node:crypto';
import { evaluateSymbol, type TickOutcome } from '../domain/engine/engine';
import { TickBook } from '../domain/engine/tick-book';
import { EngineSweepJob, EngineTickJob } from '../jobs/engine-tick.job';
import { defineProcessor } from './processor';

/**
 * Evaluates a symbol while it holds the symbol's lease in the tick book, from the latest
 * quote, until no change is left unevaluated; a tick arriving meanwhile finds the lease
 * taken and returns at once (coalesced: the holder evaluates its change next).
 */
export const engineTickProcessor = defineProcessor(EngineTickJob, async ({ symbol }, { em, services }) => {
  const book = new TickBook(services.redis, services.config.queuePrefix);
  const leaseMs = services.config.workerLockMs;
  const passes: TickOutcome[] = [];
  for (;;) {
    const token = randomUUID();
    if (!(await book.tryLock(symbol, token, leaseMs))) return { symbol, coalesced: true, passes };
    try {
      for (;;) {
        const { ver, done } = await book.state(symbol);
        if (ver <= done) break;
        passes.push(
          await evaluateSymbol(em, services.quotes, symbol, async () => {
            await book.extend(symbol, token, leaseMs);
          }),
        );
        await book.markDone(symbol, ver);
        em.clear();
      }
    } finally {
      await book.unlock(symbol, token);
    }
    // A change recorded between the last check and the unlock: take the lease again.
    const { ver, done } = await book.state(symbol);
    if (ver <= done) return { symbol, coalesced: false, passes };
  }
});

/** Re-adds a tick for each symbol with a change not yet evaluated. */
export const engineSweepProcessor = defineProcessor(EngineSweepJob, async (_payload, { services }) => {
  const behind = await new TickBook(services.redis, services.config.queuePrefix).behind();
  await Promise.all(behind.map((symbol) => services.jobs.enqueue(EngineTickJob, { symbol })));
  return { requeued: behind };
});
