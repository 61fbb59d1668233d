import { z } from 'zod';
import { defineJob, retryPolicy } from './job-definition';
import { QUEUES } from './queues';

/**
 * Bulk close is a BullMQ flow: one BulkCloseTicketJob per open ticket, children of one
 * BulkCloseFinishJob that runs when they are all done. The HTTP answer waits on the parent.
 */
export const BulkCloseTicketJob = defineJob({
  name: 'bulk-close-ticket',
  queue: QUEUES.bulkClose,
  schema: z.object({ run_id: z.uuid(), ticket: z.string().regex(/^\d{1,18}$/) }),
  // Only infrastructure failures throw (a ticket that cannot close is a recorded outcome);
  // after the last attempt the parent still runs and records the ticket as failed.
  options: { ...retryPolicy(5, 500), ignoreDependencyOnFailure: true },
  jobId: (p) => `bcr-${p.run_id}-${p.ticket}`,
});

export const BulkCloseFinishJob = defineJob({
  name: 'bulk-close-finish',
  queue: QUEUES.bulkClose,
  schema: z.object({ run_id: z.uuid() }),
  options: retryPolicy(5, 500),
  jobId: (p) => `bcr-${p.run_id}`,
});
