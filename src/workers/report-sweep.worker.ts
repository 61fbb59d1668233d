import { sweepReports } from '../domain/reports/report-sweep';
import { ReportSweepJob } from '../jobs/report-sweep.job';
import { defineProcessor } from './processor';

export const reportSweepProcessor = defineProcessor(ReportSweepJob, async (_payload, { em, services, logger }) =>
  sweepReports(em, services.jobs, logger),
);
