import { UnrecoverableError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { PermanentJobFailure } from '../platform/errors';
import { databaseErrorSummary, isDatabaseError } from '../platform/logger';
import { UnsealError } from '../platform/secret-box';

/** How long a job that failed on a sealed value stays on the dashboard, whatever its own removal rule. */
const UNSEAL_FAILURE_KEPT_SECONDS = 7 * 24 * 3600;

export interface FailJobOptions {
  /** True when the job has no attempt left. */
  isLastAttempt: boolean;
  /** Records the final failure where the API reads it (the processor's onFinalFailure), if it has one. */
  record?: (reason: string | null) => Promise<void>;
  logger: Logger;
}

/**
 * The one policy for a job's failure, for every processor. A failure is final when no retry
 * can mend it (PermanentJobFailure, which domain code throws without knowing the queue
 * library; UnsealError, a sealed value no key here opens; a payload that does not parse) or
 * when the job has no attempt left. A final failure is first recorded through `record`, so the
 * API answers instead of waiting; a permanent one then fails the job at once
 * (UnrecoverableError), anything else is rethrown for BullMQ to retry or fail as its attempts
 * say. Never returns.
 */
export async function failJob(job: Job, err: unknown, { isLastAttempt, record, logger }: FailJobOptions): Promise<never> {
  const permanent = err instanceof PermanentJobFailure || err instanceof UnsealError;
  const reason = err instanceof UnsealError ? `${err.name}: ${err.message}` : err instanceof Error ? err.message : String(err);
  if (record && (permanent || isLastAttempt)) {
    // The job's own failure is what BullMQ must see: a failure to record it is logged.
    await record(permanent ? reason : null).catch((recordErr: unknown) =>
      logger.error({ err: recordErr }, 'could not record the final failure of a job'),
    );
  }
  if (err instanceof UnsealError) {
    // No retry mends it: the job stays on the dashboard as failed (it names what could not be
    // unsealed), and its id stays taken, so nothing re-adds it quietly: retry it once the keys are fixed.
    job.opts.removeOnFail = { age: UNSEAL_FAILURE_KEPT_SECONDS };
  }
  if (permanent) throw new UnrecoverableError(reason);
  // BullMQ keeps a failed job's message in Redis and shows it on dashboards: a database
  // error's message would carry the values of its statement there.
  if (isDatabaseError(err)) throw new Error(databaseErrorSummary(err));
  throw err;
}
