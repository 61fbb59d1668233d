import { z } from 'zod';
import { defineJob, retryPolicy } from './job-definition';
import { QUEUES } from './queues';

/** The most tickets one BulkCloseTicketJob carries (see ticketChunks in domain/orders/bulk-close.ts). */
export const MAX_TICKETS_PER_JOB = 50;

const Ticket = z.string().regex(/^\d{1,18}$/);

/**
 * Bulk close is a BullMQ flow: BulkCloseTicketJobs, each carrying a chunk of the run's open
 * tickets (each ticket still closed in its own transaction), children of one
 * BulkCloseFinishJob that runs when they are all done. The HTTP answer waits on the parent.
 */
export const BulkCloseTicketJob = defineJob({
  name: 'bulk-close-ticket',
  queue: QUEUES.bulkClose,
  schema: z.union([
    z.object({ run_id: z.uuid(), tickets: z.array(Ticket).min(1).max(MAX_TICKETS_PER_JOB) }),
    // The one-ticket payload of earlier releases, so jobs queued before a rolling deploy still run.
    z.object({ run_id: z.uuid(), ticket: Ticket }).transform(({ run_id, ticket }) => ({ run_id, tickets: [ticket] })),
  ]),
  // Only infrastructure failures throw (a ticket that cannot close is a recorded outcome);
  // a retry skips the tickets already decided. After the last attempt the parent still runs
  // and records the chunk's undecided tickets as failed.
  options: { ...retryPolicy(5, 500), ignoreDependencyOnFailure: true },
  // A run's chunks never share a first ticket.
  jobId: (p) => `bcr-${p.run_id}-${p.tickets[0]}`,
});

export const BulkCloseFinishJob = defineJob({
  name: 'bulk-close-finish',
  queue: QUEUES.bulkClose,
  schema: z.object({ run_id: z.uuid() }),
  options: retryPolicy(5, 500),
  jobId: (p) => `bcr-${p.run_id}`,
});
