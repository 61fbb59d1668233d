import { RiskApplyJob, RiskPreviewJob } from '../jobs/risk.job';
import { failRiskRun, runRiskPreview } from '../domain/risk/preview';
import { runRiskApply } from '../domain/risk/rules';
import { PermanentJobFailure } from '../platform/errors';
import { defineProcessor } from './processor';

/** A risk rule preview: one aggregate query, the counts recorded on the run. */
export const riskPreviewProcessor = defineProcessor(RiskPreviewJob, async ({ run_id }, { em, isLastAttempt }) => {
  try {
    return { counts: await runRiskPreview(em, run_id) };
  } catch (err) {
    if (isLastAttempt || err instanceof PermanentJobFailure)
      await failRiskRun(em.fork(), run_id, 'The classification failed after all retries');
    throw err;
  }
});

/** Applying a saved rule: classify into the run's items, then each action once per account. */
export const riskApplyProcessor = defineProcessor(RiskApplyJob, async ({ run_id }, { em, isLastAttempt }) => {
  try {
    await runRiskApply(em, run_id);
    return { run_id };
  } catch (err) {
    if (isLastAttempt || err instanceof PermanentJobFailure)
      await failRiskRun(
        em.fork(),
        run_id,
        err instanceof PermanentJobFailure ? err.message : 'The apply failed after all retries',
      );
    throw err;
  }
});
