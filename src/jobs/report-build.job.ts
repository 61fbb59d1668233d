import { z } from 'zod';
import { defineJob, retryPolicy } from './job-definition';
import { QUEUES } from './queues';

/**
 * Builds one report's file (domain/reports/build-report.ts) on the reports queue, served by
 * its own worker pool. A retry starts the file over: the report row is the guard, so a
 * second delivery of a finished report does nothing.
 */
export const ReportBuildJob = defineJob({
  name: 'report-build',
  queue: QUEUES.reports,
  schema: z.object({ report_id: z.uuid() }),
  options: retryPolicy(3, 2000),
  jobId: (p) => `report-${p.report_id}`,
});
