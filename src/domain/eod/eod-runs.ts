import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { EOD_RUN_STATUSES, EodRun } from '../../entities/eod-run.entity';
import type { JobProducer } from '../../jobs/job-producer';
import { EodAccountsJob, EodFinishJob, EodStartJob, MAX_ACCOUNTS_PER_JOB } from '../../jobs/eod.job';
import { executeNamed } from '../../db/bound-statement';
import { errors, fieldError } from '../../platform/errors';
import { BrokerSettings } from '../../entities/broker-settings.entity';
import type { RolloverOfDate } from './account-swaps';
import {
  ACTIVE_RUN_OF_DATE,
  FAIL_CHUNK_ACCOUNTS,
  FAIL_PENDING_ACCOUNTS,
  FINISH_RUN,
  INSERT_RUN,
  INSERT_RUN_ACCOUNTS,
  MARK_RUN_RUNNING,
  RUN_ACCOUNT_IDS,
  RUN_PROGRESS,
  RUNS_FOR_METRICS,
} from './eod.queries';
import { rolloverInstant, rolloverPattern, tradingDateAt } from './rollover';
import { CalendarDate } from '../../platform/calendar-date';

/**
 * A step of a whole run, after its accounts are done (partners' daily rewards are paid): it
 * sees the run's trading date and cutoff, and must be idempotent per date, since a date may
 * be run again and a finishing job retried. `batchSize` is how many items (partners, ...) it
 * settles per transaction: what a worker killed half-way leaves done.
 */
export type EodFinishStep = (
  em: EntityManager,
  rollover: { tradingDate: string; cutoffAt: Date; batchSize: number },
) => Promise<void>;

/** The scheduler id of the daily rollover: one per deployment, whatever number of workers upsert it. */
export const ROLLOVER_SCHEDULER_ID = 'eod-rollover';

export const EodRunSchema = z.object({
  id: z.uuid(),
  trading_date: CalendarDate,
  status: z.enum(EOD_RUN_STATUSES),
  accounts_total: z.int(),
  accounts_done: z.int(),
  accounts_failed: z.int(),
  swaps_booked: z.int(),
  snapshots_written: z.int(),
  started_at: z.iso.datetime().nullable(),
  finished_at: z.iso.datetime().nullable(),
});
export type EodRunView = z.output<typeof EodRunSchema>;

export const EodRunAcceptedSchema = z.object({ id: z.uuid(), status_url: z.string().meta({ format: 'uri-reference' }) });

export function eodRunAccepted(runId: string): z.output<typeof EodRunAcceptedSchema> {
  return { id: runId, status_url: `/api/backoffice/eod/runs/${runId}` };
}

interface Progress {
  done: number;
  failed: number;
  swaps: number;
  snapshots: number;
}

async function progressOf(em: EntityManager, runId: string): Promise<Progress> {
  const [p] = await executeNamed<Progress>(em, RUN_PROGRESS.bind({ run_id: runId }));
  return p ?? { done: 0, failed: 0, swaps: 0, snapshots: 0 };
}

/** A run as the API shows it: counters frozen at its end, or counted from its accounts while it runs. */
export async function eodRunView(em: EntityManager, run: EodRun): Promise<EodRunView> {
  const live = run.status === 'running' ? await progressOf(em, run.id) : undefined;
  return {
    id: run.id,
    trading_date: run.tradingDate,
    status: run.status,
    accounts_total: run.accountsTotal,
    accounts_done: live?.done ?? run.accountsDone,
    accounts_failed: live?.failed ?? run.accountsFailed,
    swaps_booked: live?.swaps ?? run.swapsBooked,
    snapshots_written: live?.snapshots ?? run.snapshotsWritten,
    started_at: run.startedAt?.toISOString() ?? null,
    finished_at: run.finishedAt?.toISOString() ?? null,
  };
}

export async function readEodRun(em: EntityManager, runId: string): Promise<EodRun> {
  const run = await em.findOne(EodRun, runId, { refresh: true });
  if (!run) throw errors.notFound('End-of-day run');
  return run;
}

async function rolloverSettings(em: EntityManager): Promise<Pick<BrokerSettings, 'rolloverTime' | 'tripleSwapDay'>> {
  // The row exists once anything has read the settings; a fresh database answers the defaults.
  const row = await em.findOne(BrokerSettings, 1, { refresh: true });
  return row ?? new BrokerSettings();
}

/**
 * Refuses a run of a date whose rollover (rollover_time, UTC, on that date) has not passed:
 * it would snapshot the day before it ends and miss the swaps of orders opened later that day,
 * and a snapshot, once written, is never rewritten. A date after today is refused by the same rule.
 */
export async function refuseBeforeRollover(em: EntityManager, tradingDate: string, now = new Date()): Promise<void> {
  const { rolloverTime } = await rolloverSettings(em);
  if (rolloverInstant(tradingDate, rolloverTime).getTime() > now.getTime())
    throw fieldError(
      'body',
      ['trading_date'],
      `The rollover of ${tradingDate} (${rolloverTime} UTC) has not passed yet; the end of day runs after it`,
    );
}

/**
 * Records the run of a trading date and queues its start, or answers the run of that date
 * already queued or running (no second run meanwhile: the partial unique index decides, so
 * two requests at once get the same run). `created` tells which.
 */
export async function requestEodRun(
  em: EntityManager,
  jobs: Pick<JobProducer, 'enqueue'>,
  tradingDate: string,
  requestedBy: string | null,
): Promise<{ runId: string; created: boolean }> {
  const settings = await rolloverSettings(em);
  const due = rolloverInstant(tradingDate, settings.rolloverTime);
  const now = new Date();
  // Orders opened after the date's rollover time are not in it. Staff cannot ask before the
  // rollover; the scheduler fires at it, and a clock a moment early still cuts at now.
  const cutoff = due.getTime() < now.getTime() ? due : now;
  const id = randomUUID();
  const inserted = await executeNamed<{ id: string }>(
    em,
    INSERT_RUN.bind({ id, trading_date: tradingDate, cutoff_at: cutoff, requested_by: requestedBy }),
  );
  if (inserted.length === 0) {
    const [active] = await executeNamed<{ id: string }>(em, ACTIVE_RUN_OF_DATE.bind({ trading_date: tradingDate }));
    // It finished between the two statements: ask again, which records a new run.
    if (!active) return requestEodRun(em, jobs, tradingDate, requestedBy);
    return { runId: active.id, created: false };
  }
  try {
    await jobs.enqueue(EodStartJob, { run_id: id });
  } catch (err) {
    await finishEodRun(em, id, 'failed', 'The job queue was unavailable; nothing was run');
    throw err;
  }
  return { runId: id, created: true };
}

/** The scheduled rollover: the run of the date it fires on. */
export async function startScheduledRollover(em: EntityManager, jobs: Pick<JobProducer, 'enqueue'>, firedAt: Date) {
  return requestEodRun(em, jobs, tradingDateAt(firedAt), null);
}

/** Its rollover as the account jobs apply it. */
export async function rolloverOfRun(em: EntityManager, run: EodRun): Promise<RolloverOfDate> {
  const settings = await rolloverSettings(em);
  return {
    tradingDate: run.tradingDate,
    cutoffAt: run.cutoffAt,
    settings: { rolloverTime: settings.rolloverTime, tripleSwapDay: settings.tripleSwapDay },
  };
}

/** The run's accounts in chunks of at most MAX_ACCOUNTS_PER_JOB, the same chunks on every call. */
export function accountChunks(accountIds: string[], size = MAX_ACCOUNTS_PER_JOB): string[][] {
  const chunks: string[][] = [];
  for (let i = 0; i < accountIds.length; i += size) chunks.push(accountIds.slice(i, i + size));
  return chunks;
}

/**
 * Fans a run out: records its accounts (every trading account opened before the cutoff),
 * marks it running, and adds one job per chunk under the finishing parent. Safe to repeat:
 * the accounts are inserted once, and the jobs' ids are derived from the chunks.
 */
export async function fanOutEodRun(
  em: EntityManager,
  jobs: Pick<JobProducer, 'enqueueFlow'>,
  runId: string,
  chunkSize = MAX_ACCOUNTS_PER_JOB,
): Promise<number> {
  const run = await readEodRun(em, runId);
  if (run.status !== 'queued' && run.status !== 'running') return 0;
  const ids = await em.transactional(async (tx) => {
    await executeNamed(tx, INSERT_RUN_ACCOUNTS.bind({ run_id: runId, cutoff_at: run.cutoffAt }));
    const rows = await executeNamed<{ account_id: string }>(tx, RUN_ACCOUNT_IDS.bind({ run_id: runId }));
    await executeNamed(tx, MARK_RUN_RUNNING.bind({ run_id: runId, total: rows.length }));
    return rows.map((r) => r.account_id);
  });
  // No account to close: the caller runs the whole-run steps and completes the run itself.
  if (ids.length === 0) return 0;
  await jobs.enqueueFlow(
    EodFinishJob,
    { run_id: runId },
    EodAccountsJob,
    accountChunks(ids, chunkSize).map((account_ids) => ({ run_id: runId, account_ids })),
  );
  return ids.length;
}

/** After a chunk's last attempt: its accounts still undecided are failed, with the reason. */
export async function failChunkAccounts(em: EntityManager, runId: string, accountIds: string[], reason: string) {
  await executeNamed(em, FAIL_CHUNK_ACCOUNTS.bind({ run_id: runId, account_ids: JSON.stringify(accountIds), reason }));
}

/** Completes (or fails) the run: accounts no job decided count as failed, and the counters are frozen. */
export async function finishEodRun(
  em: EntityManager,
  runId: string,
  status: 'completed' | 'failed',
  error: string | null = null,
): Promise<void> {
  await executeNamed(em, FAIL_PENDING_ACCOUNTS.bind({ run_id: runId, reason: error ?? 'No job decided this account' }));
  const p = await progressOf(em, runId);
  await executeNamed(
    em,
    FINISH_RUN.bind({ run_id: runId, status, done: p.done, failed: p.failed, swaps: p.swaps, snapshots: p.snapshots, error }),
  );
}

/**
 * Keeps the daily rollover scheduled at the broker's rollover_time: a BullMQ job scheduler
 * under one id, so however many worker processes (or setting changes) upsert it, one
 * schedule exists. Called by every worker process that serves the queue at start-up, and
 * after the setting changes.
 */
export async function syncRolloverSchedule(em: EntityManager, jobs: Pick<JobProducer, 'scheduleCron'>): Promise<string> {
  const settings = await rolloverSettings(em);
  const pattern = rolloverPattern(settings.rolloverTime);
  await jobs.scheduleCron(EodStartJob, ROLLOVER_SCHEDULER_ID, pattern, {});
  return pattern;
}

export interface RunProgressSample {
  trading_date: string;
  status: string;
  total: number;
  done: number;
  failed: number;
}

/** The runs in flight and the latest finished one, for the progress gauge on /metrics. */
export function runsForMetrics(em: EntityManager): Promise<RunProgressSample[]> {
  return executeNamed<RunProgressSample>(em, RUNS_FOR_METRICS.bind({}));
}
