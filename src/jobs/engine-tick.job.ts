import { z } from 'zod';
import { defineJob } from './job-definition';
import { QUEUES } from './queues';

/**
 * A quote of `symbol` changed (domain/engine/tick-book.ts): evaluate its pending orders,
 * stop-losses, take-profits, trailing stops and the margin of the accounts holding it.
 * Every quote change adds one; a burst for one symbol is coalesced by the tick book, not
 * by the job id, so a change arriving while an evaluation runs is never lost.
 */
export const EngineTickJob = defineJob({
  name: 'engine-tick',
  queue: QUEUES.engine,
  schema: z.object({ symbol: z.string().min(1).max(32) }),
  // Retried after infrastructure failures (a deadlock, a lost connection); every step is idempotent.
  options: {
    attempts: 5,
    backoff: { type: 'exponential', delay: 200 },
    removeOnComplete: { count: 1000 },
    removeOnFail: { count: 1000 },
  },
});

/**
 * The safety net: re-adds a tick for every symbol whose latest quote change was not yet
 * evaluated (a tick job lost with Redis, an enqueue that failed after the quote was set).
 */
export const EngineSweepJob = defineJob({
  name: 'engine-sweep',
  queue: QUEUES.engine,
  schema: z.object({}),
  options: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 1000 } },
  schedule: { id: 'engine-sweep', everyMs: 5_000 },
});
