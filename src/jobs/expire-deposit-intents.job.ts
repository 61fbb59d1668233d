import { z } from 'zod';
import { defineJob } from './job-definition';
import { QUEUES } from './queues';

/** Marks deposit intents nobody paid by their expires_at as expired; runs on a schedule the worker tier sets up. */
export const ExpireDepositIntentsJob = defineJob({
  name: 'expire-deposit-intents',
  queue: QUEUES.orders,
  schema: z.object({}),
  // A failed sweep is superseded by the next one.
  options: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 1000 } },
  schedule: { id: 'expire-deposit-intents', everyMs: 15_000 },
});
