import { TickBook } from '../domain/engine/tick-book';
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
