import { SimulatorTickJob } from '../../src/jobs/simulator-tick.job';
import { PROCESSORS } from '../../src/workers';
import { defineProcessor } from '../../src/workers/processor';

/**
 * The service's processors with the price feed's tick job failing while `feed.down` is true
 * and succeeding once it is false: failed jobs to look at, retry, and see complete.
 */
export function flakyPriceFeed() {
  const feed = { down: true };
  const processors = PROCESSORS.map((p) =>
    p.definition.name === SimulatorTickJob.name
      ? defineProcessor(SimulatorTickJob, async () => {
          if (feed.down) throw new Error('price feed down');
          return { moved: 0 };
        })
      : p,
  );
  return { feed, processors };
}
