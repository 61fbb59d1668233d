import { z } from 'zod';
import { defineJob } from './job-definition';
import { QUEUES } from './queues';

// Each sweep is superseded by the next one, so a failed run is not retried.
const SWEEP_OPTIONS = { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 1000 } };

/** Resolves pending support conversations the customer left unanswered for a week. */
export const ResolvePendingConversationsJob = defineJob({
  name: 'resolve-pending-conversations',
  queue: QUEUES.orders,
  schema: z.object({}),
  options: SWEEP_OPTIONS,
  schedule: { id: 'resolve-pending-conversations', everyMs: 30_000 },
});

/** Reopens snoozed support conversations whose snooze has ended. */
export const WakeSnoozedConversationsJob = defineJob({
  name: 'wake-snoozed-conversations',
  queue: QUEUES.orders,
  schema: z.object({}),
  options: SWEEP_OPTIONS,
  schedule: { id: 'wake-snoozed-conversations', everyMs: 15_000 },
});

/** Reports support conversations past their first-response time without a staff answer. */
export const ConversationSlaJob = defineJob({
  name: 'conversation-sla',
  queue: QUEUES.orders,
  schema: z.object({}),
  options: SWEEP_OPTIONS,
  schedule: { id: 'conversation-sla', everyMs: 15_000 },
});
