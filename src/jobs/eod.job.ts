import { z } from 'zod';
import { defineJob, retryPolicy } from './job-definition';
import { QUEUES } from './queues';

/** The most accounts one EodAccountsJob carries (see accountChunks in domain/eod/eod-runs.ts). */
export const MAX_ACCOUNTS_PER_JOB = 100;

/**
 * The end of day lives on its own queue (`eod`), served by its own worker pool: a rollover
 * touches every trading account at once and must neither wait behind nor hold up trading,
 * mail or webhooks.
 *
 * EodStartJob begins a run: with a run id, the run staff asked for; without one, the
 * scheduled rollover, which records the run of the date it fires on first. Either way it fans
 * out: the run's accounts as EodAccountsJobs, children of one EodFinishJob (a BullMQ flow).
 * Every step is idempotent: the run's rows and the database keys decide what is done.
 */
export const EodStartJob = defineJob({
  name: 'eod-start',
  queue: QUEUES.eod,
  schema: z.object({ run_id: z.uuid().optional() }),
  options: retryPolicy(5, 1000),
  jobId: (p) => `eods-${p.run_id ?? 'scheduled'}`,
});

/**
 * A chunk of a run's accounts, in one transaction: their swaps, their snapshots and the
 * rollover steps, each a statement for the whole chunk (one transaction per account only when
 * one fails). An account that fails is retried with the chunk (those done are skipped); after
 * the last attempt it is counted failed and the parent still runs. At most 100 accounts: a
 * chunk holds its accounts' rows locked (a close on one of them waits) for as long as it runs.
 */
export const EodAccountsJob = defineJob({
  name: 'eod-accounts',
  queue: QUEUES.eod,
  schema: z.object({ run_id: z.uuid(), account_ids: z.array(z.uuid()).min(1).max(MAX_ACCOUNTS_PER_JOB) }),
  options: { ...retryPolicy(3, 500), ignoreDependencyOnFailure: true },
  // A run's chunks never share a first account.
  jobId: (p) => `eoda-${p.run_id}-${p.account_ids[0]}`,
});

/** Runs when every account job of the run is done or gave up: the whole-run steps, then the run completes and queues the daily statements. */
export const EodFinishJob = defineJob({
  name: 'eod-finish',
  queue: QUEUES.eod,
  schema: z.object({ run_id: z.uuid() }),
  options: retryPolicy(5, 1000),
  jobId: (p) => `eodf-${p.run_id}`,
});
