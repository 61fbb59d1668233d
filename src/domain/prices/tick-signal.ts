import type { Logger } from 'pino';
import type { JobProducer } from '../../jobs/job-producer';
import { EngineTickJob } from '../../jobs/engine-tick.job';

export interface TickSignalDeps {
  jobs: Pick<JobProducer, 'enqueue'>;
  logger: Logger;
}

/**
 * Turns quote changes into ticks for the workers (never evaluated in the
 * request that set the quote). Call it after the quotes are stored. It never fails its
 * caller: a tick that could not be queued is found by the engine sweep, because the quote
 * store counted the change when it stored the quote.
 */
export async function signalTicks(deps: TickSignalDeps, symbols: string[]): Promise<void> {
  if (symbols.length === 0) return;
  try {
    await Promise.all(symbols.map((symbol) => deps.jobs.enqueue(EngineTickJob, { symbol })));
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message, symbols }, 'tick not queued; the engine sweep will evaluate it');
  }
}
