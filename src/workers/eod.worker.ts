import type { EntityManager } from '@mikro-orm/postgresql';
import { EodAccountsJob, EodFinishJob, EodStartJob } from '../jobs/eod.job';
import { closeAccountsOfRun } from '../domain/eod/account-chunk';
import { queueDailyStatements } from '../domain/eod/daily-statements';
import { failChunkAccounts, fanOutEodRun, finishEodRun, readEodRun, startScheduledRollover } from '../domain/eod/eod-runs';
import { ACCOUNT_ROLLOVER_STEPS, EOD_FINISH_STEPS } from '../policy';
import { defineProcessor } from './processor';

/** The whole-run steps (src/policy.ts) of a run that did not fail; each is idempotent per date. */
async function runFinishSteps(em: EntityManager, runId: string, batchSize: number): Promise<void> {
  const run = await readEodRun(em, runId);
  if (run.status === 'failed') return;
  for (const step of EOD_FINISH_STEPS) await step(em, { tradingDate: run.tradingDate, cutoffAt: run.cutoffAt, batchSize });
}

/** A run staff asked for fans out; the scheduled rollover first records the run of its date. */
export const eodStartProcessor = defineProcessor(
  EodStartJob,
  async ({ run_id }, { em, services, job }) => {
    if (run_id) {
      const accounts = await fanOutEodRun(em, services.jobs, run_id);
      // A run with no account to close has no finishing job: its whole-run steps run here,
      // and it completes once they are done.
      if (accounts === 0) {
        await runFinishSteps(em, run_id, services.config.eodStepBatchSize);
        await finishEodRun(em, run_id, 'completed');
      }
      return { accounts };
    }
    const { runId } = await startScheduledRollover(em, services.jobs, new Date(job.timestamp + (job.opts.delay ?? 0)));
    return { run_id: runId };
  },
  async ({ run_id }, { em }, reason) => {
    if (run_id) await finishEodRun(em, run_id, 'failed', reason ?? 'The run could not start after all retries');
  },
);

/** A chunk of accounts: their swaps, snapshots and rollover steps in one transaction, a statement per kind. */
export const eodAccountsProcessor = defineProcessor(
  EodAccountsJob,
  async ({ run_id, account_ids }, { em, services }) =>
    closeAccountsOfRun(em, services.quotes, run_id, account_ids, ACCOUNT_ROLLOVER_STEPS),
  async ({ run_id, account_ids }, { em }, reason) =>
    failChunkAccounts(em, run_id, account_ids, (reason ?? 'Failed after all retries').slice(0, 500)),
);

/**
 * After every chunk: the whole-run steps (the daily partner payment), then the run completes,
 * then its daily statements are queued. A run reads `completed` only once everything it pays is
 * paid; a worker killed half-way leaves it `running` and this job's retry pays the rest.
 */
export const eodFinishProcessor = defineProcessor(
  EodFinishJob,
  async ({ run_id }, { em, services }) => {
    await runFinishSteps(em, run_id, services.config.eodStepBatchSize);
    await finishEodRun(em, run_id, 'completed');
    const run = await readEodRun(em, run_id);
    return { statements: await queueDailyStatements(em, services.mailSecrets, services.jobs, run.tradingDate) };
  },
  // A step that fails every retry fails the run, with its reason, so staff see it and may run the date again.
  async ({ run_id }, { em }, reason) =>
    finishEodRun(em, run_id, 'failed', (reason ?? 'The run could not finish after all retries').slice(0, 500)),
);
