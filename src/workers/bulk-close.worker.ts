import { BulkCloseFinishJob, BulkCloseTicketJob } from '../jobs/bulk-close.job';
import { closeRunTickets, finishRun, RunTermsCache } from '../domain/orders/bulk-close';
import { defineProcessor } from './processor';

/** Pricing terms shared by the tickets this process closes (see RunTermsCache). */
const terms = new RunTermsCache();

/** A chunk of a run's tickets, one after the other, each in its own transaction with its outcome recorded on the run's item. */
export const bulkCloseTicketProcessor = defineProcessor(BulkCloseTicketJob, async ({ run_id, tickets }, { em, services }) => ({
  statuses: await closeRunTickets(em, services.quotes, run_id, tickets, terms.forRun(run_id)),
}));

/** Runs after every ticket job of the run is done (or gave up): completes the run. */
export const bulkCloseFinishProcessor = defineProcessor(BulkCloseFinishJob, async ({ run_id }, { em }) => {
  await finishRun(em, run_id);
  return { run_id };
});
