import { z } from 'zod';
import { defineJob } from './job-definition';
import { QUEUES } from './queues';

/**
 * Retention (domain/retention/retention.ts): deletes relayed outbox rows, handled inbox rows,
 * finished webhook deliveries and final mails once older than their configured ages. On a
 * schedule the worker tier keeps, on the events queue: housekeeping of that pool.
 */
export const RetentionJob = defineJob({
  name: 'retention',
  queue: QUEUES.events,
  schema: z.object({}),
  // A failed run is superseded by the next one, which starts over from what is left.
  options: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 1000 } },
  schedule: { id: 'retention', everyMs: 15 * 60_000 },
});
