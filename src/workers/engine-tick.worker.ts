import type { EntityManager } from '@mikro-orm/postgresql';
import { TickBook } from '../domain/engine/tick-book';
import { queueCloseOuts } from '../domain/prop/challenge-consumer';
import { evaluateChallengesOnTick } from '../domain/prop/challenge-evaluation';
import { runTicks } from '../domain/engine/tick-runner';
import { EngineSweepJob, EngineTickJob } from '../jobs/engine-tick.job';
import { defineProcessor } from './processor';

/** Evaluates a symbol's ticks under its lease (see runTicks); a job at its bound hands on to a new tick job. */
export const engineTickProcessor = defineProcessor(EngineTickJob, async ({ symbol }, { em, services, logger }) =>
  runTicks(
    {
      em,
      quotes: services.quotes,
      book: new TickBook(services.redis, services.config.queuePrefix),
      leaseMs: services.config.workerLockMs,
      logger,
      handOn: async (s) => void (await services.jobs.enqueue(EngineTickJob, { symbol: s })),
      // The prop challenge rules on every tick, for the challenge accounts holding the symbol.
      onChallengeHolders: async (accountIds) => {
        const outcome = await evaluateChallengesOnTick(em.fork() as EntityManager, services.quotes, accountIds);
        await queueCloseOuts(services.jobs, outcome.failed);
      },
    },
    symbol,
  ),
);

/** Re-adds a tick for each symbol with a change not yet evaluated. */
export const engineSweepProcessor = defineProcessor(EngineSweepJob, async (_payload, { services }) => {
  const behind = await new TickBook(services.redis, services.config.queuePrefix).behind();
  await Promise.all(behind.map((symbol) => services.jobs.enqueue(EngineTickJob, { symbol })));
  return { requeued: behind };
});
