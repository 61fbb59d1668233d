import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { executeBound } from '../../db/bound-statement';
import type { JobProducer } from '../../jobs/job-producer';
import { ReportBuildJob } from '../../jobs/report-build.job';
import { clearChunks } from './report-store';
import { FAIL_STUCK, MARK_REQUEUED, UNFINISHED_REPORTS, UNMARK_REQUEUED } from './reports.queries';

/*
 * A report is `queued` or `running` only while its build job exists: the job is added right
 * after the report commits, and every attempt's start (or a retry's) touches the row. A job
 * lost from Redis (a flushed or failed-over Redis, an enqueue that failed after the commit
 * without the request seeing it, a job removed by hand from the dashboard) would leave the
 * report unfinished forever, and its customer waiting on it.
 */
/** How long a report may sit untouched before the sweep looks at its job: far past an enqueue after commit. */
export const REPORT_STUCK_AFTER_MS = 2 * 60_000;
/** The longest a build may run; a larger statement is still minutes. Past it the report fails. */
export const REPORT_BUILD_BOUND_MS = 60 * 60_000;
const BATCH = 100;

export interface SweepOutcome {
  requeued: string[];
  failed: string[];
}

/**
 * Settles reports whose build job is gone: the first time, the build is queued again (the
 * report back to `queued`; the build starts its file over); the second time, or when a build
 * has run past the bound, the report is `failed` with the reason, and its partial file
 * deleted. A job still waiting, delayed or running is left alone; so is every report when
 * Redis does not answer (nothing can be told then). Each change is conditional on the row
 * not having moved since it was read, so a build that finishes meanwhile wins.
 */
export async function sweepReports(
  em: EntityManager,
  jobs: Pick<JobProducer, 'queue' | 'ensureQueued'>,
  logger?: Logger,
  now = new Date(),
): Promise<SweepOutcome> {
  const before = new Date(now.getTime() - REPORT_STUCK_AFTER_MS);
  const startedBefore = new Date(now.getTime() - REPORT_BUILD_BOUND_MS);
  const candidates = await executeBound<{ id: string; overdue: boolean | null; requeued: boolean }>(
    em,
    UNFINISHED_REPORTS.bind({ before, started_before: startedBefore, limit: BATCH }),
  );
  const outcome: SweepOutcome = { requeued: [], failed: [] };
  const fail = async (id: string, error: string) => {
    const [failed] = await executeBound(em, FAIL_STUCK.bind({ id, before, error }));
    if (!failed) return;
    await clearChunks(em, id);
    outcome.failed.push(id);
    logger?.warn({ report_id: id, reason: error }, 'stuck report failed');
  };
  const queue = jobs.queue(ReportBuildJob.queue);
  for (const report of candidates) {
    if (report.overdue) {
      await fail(report.id, `The build did not finish within ${REPORT_BUILD_BOUND_MS / 60_000} minutes`);
      continue;
    }
    let state: string;
    try {
      state = await queue.getJobState(ReportBuildJob.jobId!({ report_id: report.id }));
    } catch {
      // Redis does not answer: no report can be judged now; the next run tries again.
      break;
    }
    // A finished job whose report is still unfinished is as good as lost: nothing will settle it.
    if (state !== 'unknown' && state !== 'completed' && state !== 'failed') continue;
    if (report.requeued) {
      await fail(report.id, 'The build job was lost twice; ask for the report again');
      continue;
    }
    const [marked] = await executeBound(em, MARK_REQUEUED.bind({ id: report.id, before }));
    if (!marked) continue;
    try {
      await jobs.ensureQueued(ReportBuildJob, { report_id: report.id });
    } catch (err) {
      // Not queued after all: the report keeps its one chance for the next run.
      await executeBound(em, UNMARK_REQUEUED.bind({ id: report.id }));
      throw err;
    }
    outcome.requeued.push(report.id);
    logger?.warn({ report_id: report.id, job_state: state }, 'report build queued again after its job was lost');
  }
  return outcome;
}
