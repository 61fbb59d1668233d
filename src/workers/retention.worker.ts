import { removeExpiredRows } from '../domain/retention/retention';
import { RetentionJob } from '../jobs/retention.job';
import { defineProcessor } from './processor';

/** Rows per delete: small enough that each batch's locks are brief. */
const BATCH_SIZE = 1000;
/** Longest a run keeps starting batches: well inside the job lock; the next run carries on. */
const BUDGET_MS = 20_000;

export const retentionProcessor = defineProcessor(RetentionJob, async (_payload, { em, services, logger }) => {
  const { config } = services;
  const removed = await removeExpiredRows(em, config.retention, {
    batchSize: BATCH_SIZE,
    budgetMs: Math.min(BUDGET_MS, config.workerLockMs / 3),
  });
  if (Object.values(removed).some((n) => n > 0)) logger.info(removed, 'expired rows removed');
  return removed;
});
