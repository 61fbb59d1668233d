import { z } from 'zod';
import { defineJob } from './job-definition';
import { QUEUES } from './queues';

/**
 * Works through the notifications consumer's inbox (domain/notifications): kicked by the
 * outbox relay after it hands over events, and run on a schedule of its own in case a kick is
 * lost. Not deduplicated: a kick during a run must start another run. Any number may run at
 * once; each event is taken by one of them (processInbox).
 */
export const NotifyCustomersJob = defineJob({
  name: 'notify-customers',
  queue: QUEUES.events,
  schema: z.object({}),
  options: {
    attempts: 3,
    backoff: { type: 'exponential', delay: 1000 },
    removeOnComplete: { count: 100 },
    removeOnFail: { count: 1000 },
  },
  schedule: { id: 'notify-customers', everyMs: 5000 },
});
