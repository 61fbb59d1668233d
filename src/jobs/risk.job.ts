import { z } from 'zod';
import { defineJob, retryPolicy } from './job-definition';
import { QUEUES } from './queues';

/**
 * Risk rule runs live on their own queue (`risk`), so a worker pool can serve them alone
 * (WORKER_QUEUES=risk): a classification is one heavy aggregate query, and it should neither
 * wait behind nor hold up trading or mail work. The payload is the run's id; the rule input
 * and the window are in the run's row.
 */
export const RiskPreviewJob = defineJob({
  name: 'risk-preview',
  queue: QUEUES.risk,
  schema: z.object({ run_id: z.uuid() }),
  options: retryPolicy(3, 500),
  jobId: (p) => `rp-${p.run_id}`,
});

/** Applies a saved risk rule: classifies like the preview, then executes the actions per class, each once per account. */
export const RiskApplyJob = defineJob({
  name: 'risk-apply',
  queue: QUEUES.risk,
  schema: z.object({ run_id: z.uuid() }),
  options: retryPolicy(5, 1000),
  jobId: (p) => `ra-${p.run_id}`,
});
