import { SimulatorTickJob } from '../jobs/simulator-tick.job';
import { walkQuotes } from '../domain/prices/random-walk';
import { signalTicks } from '../domain/prices/tick-signal';
import { defineProcessor } from './processor';

/** Moves the configured symbols' quotes one random-walk step, then signals the engine of each moved symbol. */
export const simulatorTickProcessor = defineProcessor(
  SimulatorTickJob,
  async ({ symbols, volatility_bps }, { em, services, logger }) => {
    const moved = await walkQuotes(em, services.quotes, symbols, volatility_bps);
    await signalTicks({ jobs: services.jobs, logger }, moved);
    return { moved: moved.length };
  },
);
