import { z } from 'zod';
import { defineJob } from './job-definition';
import { QUEUES } from './queues';

/** Marks pending orders past their expiry_at as expired; runs on a schedule the worker tier sets up. */
export const ExpirePendingOrdersJob = defineJob({
  name: 'expire-pending-orders',
  queue: QUEUES.orders,
  schema: z.object({}),
  // A failed sweep is superseded by the next one.
  options: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 1000 } },
  schedule: { id: 'expire-pending-orders', everyMs: 15_000 },
});
