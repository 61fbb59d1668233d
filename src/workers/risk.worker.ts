import { RiskApplyJob, RiskPreviewJob } from '../jobs/risk.job';
import { failRiskRun, runRiskPreview } from '../domain/risk/preview';
import { runRiskApply } from '../domain/risk/rules';
import { defineProcessor } from './processor';

/** A run that failed for good (a refusal no retry changes, or no attempt left) is recorded failed, so the API answers. */
const recordFailedRun =
  (what: string) =>
  async ({ run_id }: { run_id: string }, { em }: { em: Parameters<typeof failRiskRun>[0] }, reason: string | null) =>
    failRiskRun(em, run_id, reason ?? `The ${what} failed after all retries`);

/** A risk rule preview: one aggregate query, the counts recorded on the run. */
export const riskPreviewProcessor = defineProcessor(
  RiskPreviewJob,
  async ({ run_id }, { em }) => ({ counts: await runRiskPreview(em, run_id) }),
  recordFailedRun('classification'),
);

/** Applying a saved rule: classify into the run's items, then each action once per account. */
export const riskApplyProcessor = defineProcessor(
  RiskApplyJob,
  async ({ run_id }, { em }) => {
    await runRiskApply(em, run_id);
    return { run_id };
  },
  recordFailedRun('apply'),
);
