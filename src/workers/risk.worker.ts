import { RiskPreviewJob } from '../jobs/risk.job';
import { failRiskRun, runRiskPreview } from '../domain/risk/preview';
import { defineProcessor } from './processor';

/** A risk rule preview: one aggregate query, the counts recorded on the run. */
export const riskPreviewProcessor = defineProcessor(RiskPreviewJob, async ({ run_id }, { em, isLastAttempt }) => {
  try {
    return { counts: await runRiskPreview(em, run_id) };
  } catch (err) {
    if (isLastAttempt) await failRiskRun(em.fork(), run_id, 'The classification failed after all retries');
    throw err;
  }
});
