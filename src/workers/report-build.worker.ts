import { buildReport, failBuild } from '../domain/reports/build-report';
import { ReportBuildJob } from '../jobs/report-build.job';
import { PermanentJobFailure } from '../platform/errors';
import { databaseErrorSummary, isDatabaseError } from '../platform/logger';
import { defineProcessor } from './processor';

/**
 * Builds a report's file. A failure that is final (no attempt left, or one no retry mends)
 * marks the report failed with the reason in `error` and drops its partial file; an earlier
 * failure is retried and the next attempt starts the file over.
 */
export const reportBuildProcessor = defineProcessor(
  ReportBuildJob,
  async ({ report_id }, { em, services, logger, isLastAttempt }) => {
    try {
      return await buildReport(em, services.quotes, report_id, logger);
    } catch (err) {
      if (isLastAttempt || err instanceof PermanentJobFailure) {
        // A database error's message may carry values of its statement: the summary names the error only.
        const reason = isDatabaseError(err) ? databaseErrorSummary(err) : err instanceof Error ? err.message : String(err);
        await failBuild(em.fork(), report_id, reason).catch((recordErr: unknown) =>
          logger.error({ err: recordErr, report_id }, 'could not record the failure of a report'),
        );
      }
      throw err;
    }
  },
);
