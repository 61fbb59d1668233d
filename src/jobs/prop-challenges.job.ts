import { z } from 'zod';
import { defineJob } from './job-definition';
import { QUEUES } from './queues';

/**
 * Closes every open order of a failed challenge stage (reason `prop_breach`) and records the
 * close-out (domain/prop/challenge-decisions.ts). Queued once per failure by whoever failed it,
 * and again by the prop sweep while the close-out has not finished, so an order is never left
 * open on a failed challenge: the job id is the challenge, one waits at a time, and every close
 * matches only an open order. Retried while an order has no price to close at.
 */
export const PropCloseOutJob = defineJob({
  name: 'prop-close-out',
  queue: QUEUES.engine,
  schema: z.object({ challenge_id: z.uuid() }),
  jobId: ({ challenge_id }) => `prop-close-out-${challenge_id}`,
  options: {
    attempts: 10,
    backoff: { type: 'exponential', delay: 250 },
    removeOnComplete: { count: 1000 },
    removeOnFail: { count: 1000 },
  },
});

/**
 * The prop sweep (domain/prop/challenge-evaluation.ts): `max_trading_days` expiry, lagging close-outs, passes an evaluation after a close missed.
 */
export const PropSweepJob = defineJob({
  name: 'prop-sweep',
  queue: QUEUES.engine,
  schema: z.object({}),
  options: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 1000 } },
  schedule: { id: 'prop-sweep', everyMs: 5_000 },
});

/**
 * Works through the `prop-challenges` consumer's inbox of order closes: the rules after every
 * close, the pass included (domain/prop/challenge-consumer.ts). Kicked by the outbox relay,
 * and run on a schedule of its own in case a kick is lost; not deduplicated.
 */
export const PropAfterCloseJob = defineJob({
  name: 'prop-after-close',
  queue: QUEUES.engine,
  schema: z.object({}),
  options: {
    attempts: 3,
    backoff: { type: 'exponential', delay: 500 },
    removeOnComplete: { count: 100 },
    removeOnFail: { count: 1000 },
  },
  schedule: { id: 'prop-after-close', everyMs: 5_000 },
});
