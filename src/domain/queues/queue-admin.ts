import type { EntityManager } from '@mikro-orm/postgresql';
import type { Job, JobType } from 'bullmq';
import { z } from 'zod';
import { ALL_QUEUES, type QueueName } from '../../jobs/queues';
import type { JobProducer } from '../../jobs/job-producer';
import { errors } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';

/**
 * What operators see of the queues and may do to them, for scripts (the /api/admin/queues
 * routes) the same as the dashboard shows: counts by state, the oldest waiting job's age,
 * jobs by state, and retrying a failed job. Job payloads carry ids, never secrets (style
 * rule 3), so they are shown; failure reasons never hold database values (see logger.ts).
 */
export const JOB_STATES = ['waiting', 'active', 'delayed', 'failed', 'completed', 'prioritized', 'waiting-children'] as const;
export type JobState = (typeof JOB_STATES)[number];

export const QueueSummarySchema = z.object({
  name: z.enum(ALL_QUEUES as [QueueName, ...QueueName[]]),
  counts: z.object(Object.fromEntries(JOB_STATES.map((state) => [state, z.int()])) as Record<JobState, z.ZodInt>),
  oldest_waiting_seconds: z.number().nullable().describe('Age of the oldest waiting job; null when none waits'),
  paused: z.boolean(),
});
export type QueueSummary = z.output<typeof QueueSummarySchema>;

export const QueueJobSchema = z.object({
  id: z.string(),
  name: z.string(),
  state: z.string(),
  data: z.unknown(),
  attempts_made: z.int(),
  attempts_allowed: z.int(),
  failed_reason: z.string().nullable(),
  created_at: z.iso.datetime(),
  processed_at: z.iso.datetime().nullable(),
  finished_at: z.iso.datetime().nullable(),
  processed_by: z.string().nullable(),
});
export type QueueJobView = z.output<typeof QueueJobSchema>;

const iso = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : null);

export function queueJobView(job: Job, state: string): QueueJobView {
  return {
    id: String(job.id),
    name: job.name,
    state,
    data: job.data ?? null,
    attempts_made: job.attemptsMade,
    attempts_allowed: job.opts.attempts ?? 1,
    failed_reason: job.failedReason ?? null,
    created_at: new Date(job.timestamp).toISOString(),
    processed_at: iso(job.processedOn),
    finished_at: iso(job.finishedOn),
    processed_by: job.processedBy ?? null,
  };
}

export async function queueSummaries(jobs: JobProducer): Promise<QueueSummary[]> {
  return Promise.all(
    ALL_QUEUES.map(async (name) => {
      const queue = jobs.queue(name);
      const [counts, oldest, paused] = await Promise.all([
        queue.getJobCounts(...JOB_STATES),
        queue.getJobs(['waiting', 'prioritized'], 0, 0, true),
        queue.isPaused(),
      ]);
      const first = oldest[0];
      return {
        name,
        // BullMQ adds keys of its own (a legacy `paused` count): the answer names exactly the states.
        counts: Object.fromEntries(JOB_STATES.map((state) => [state, counts[state] ?? 0])) as Record<JobState, number>,
        oldest_waiting_seconds: first ? Math.max(0, (Date.now() - first.timestamp - (first.delay ?? 0)) / 1000) : null,
        paused,
      };
    }),
  );
}

/** A page of one queue's jobs in one state, newest first. */
export async function queueJobs(jobs: JobProducer, name: QueueName, state: JobState, page: number, pageSize: number) {
  const queue = jobs.queue(name);
  const start = (page - 1) * pageSize;
  const [found, counts] = await Promise.all([
    queue.getJobs([state as JobType], start, start + pageSize - 1, false),
    queue.getJobCounts(state),
  ]);
  return {
    items: found.filter((j): j is Job => Boolean(j)).map((j) => queueJobView(j, state)),
    page,
    page_size: pageSize,
    total: counts[state] ?? 0,
  };
}

/** Puts a failed job back to run again; anything but a failed job is 409 JOB_NOT_FAILED. */
/** Runs a failed job again, audited in the caller's unit of work. */
export async function retryFailedJob(
  em: EntityManager,
  jobs: JobProducer,
  actor: StaffCaller,
  name: QueueName,
  jobId: string,
): Promise<QueueJobView> {
  const job = await jobs.queue(name).getJob(jobId);
  if (!job) throw errors.notFound('Job');
  const state = await job.getState();
  if (state !== 'failed') throw errors.conflict('JOB_NOT_FAILED', `The job is ${state}; only a failed job can be retried`);
  await job.retry('failed');
  const view = queueJobView(job, await job.getState());
  recordAudit(em, actor, {
    action: 'queue.job.retried',
    entityType: 'queue_job',
    entityId: `${name}/${jobId}`,
    after: { state: view.state },
  });
  await em.flush();
  return view;
}
