import type { EntityManager } from '@mikro-orm/postgresql';
import { RiskApplyJob, RiskPreviewJob } from '../jobs/risk.job';
import { failRiskRun, runRiskPreview } from '../domain/risk/preview';
import { runRiskApply } from '../domain/risk/rules';
import { PermanentJobFailure } from '../platform/errors';
import { defineProcessor } from './processor';

/**
 * A risk run's work: on its last attempt, or on a business refusal that no retry changes, the
 * run is recorded failed with the reason, so the API answers instead of waiting.
 */
async function failingRun<T>(em: EntityManager, runId: string, isLastAttempt: boolean, what: string, work: () => Promise<T>) {
  try {
    return await work();
  } catch (err) {
    if (isLastAttempt || err instanceof PermanentJobFailure)
      await failRiskRun(
        em.fork(),
        runId,
        err instanceof PermanentJobFailure ? err.message : `The ${what} failed after all retries`,
      );
    throw err;
  }
}

/** A risk rule preview: one aggregate query, the counts recorded on the run. */
export const riskPreviewProcessor = defineProcessor(RiskPreviewJob, async ({ run_id }, { em, isLastAttempt }) =>
  failingRun(em, run_id, isLastAttempt, 'classification', async () => ({ counts: await runRiskPreview(em, run_id) })),
);

/** Applying a saved rule: classify into the run's items, then each action once per account. */
export const riskApplyProcessor = defineProcessor(RiskApplyJob, async ({ run_id }, { em, isLastAttempt }) =>
  failingRun(em, run_id, isLastAttempt, 'apply', async () => {
    await runRiskApply(em, run_id);
    return { run_id };
  }),
);
