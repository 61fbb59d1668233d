import { z } from 'zod';
import { defineJob } from './job-definition';
import { QUEUES } from './queues';

export const RANDOM_WALK_SCHEDULER_ID = 'simulator-random-walk';

/** One step of the price simulator's random walk for the configured symbols. */
export const SimulatorTickJob = defineJob({
  name: 'simulator-tick',
  queue: QUEUES.simulator,
  schema: z.object({
    symbols: z.array(z.string().min(1).max(32)).min(1).max(200),
    volatility_bps: z.number().gt(0).max(1000),
  }),
  // A tick that fails is simply superseded by the next one.
  options: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 1000 } },
});
