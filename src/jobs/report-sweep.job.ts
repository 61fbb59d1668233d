import { z } from 'zod';
import { defineJob } from './job-definition';
import { QUEUES } from './queues';

/**
 * The stuck-report sweep (domain/reports/report-sweep.ts): a report whose build job was lost
 * is queued again once, then failed; one that runs past the bound is failed. On a schedule,
 * on the events queue (the housekeeping pool), so it runs even while the reports pool is
 * down or its queue paused.
 */
export const ReportSweepJob = defineJob({
  name: 'report-sweep',
  queue: QUEUES.events,
  schema: z.object({}),
  // A failed run is superseded by the next one.
  options: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 1000 } },
  schedule: { id: 'report-sweep', everyMs: 60_000 },
});
