import { hostname } from 'node:os';
import { MetricsTime, Worker, type Job } from 'bullmq';
import { RequestContext } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RedisClient } from '../platform/redis';
import type { JobDefinition } from '../jobs/job-definition';
import { PermanentJobFailure } from '../platform/errors';
import { recordTiming } from '../platform/queue-timings';
import { logContext } from '../platform/logger';
import type { AppServices } from '../app-services';
import { failJob } from './final-failure';
import type { Processor } from './processor';

/** How long a starting worker waits for Redis to accept its housekeeping schedules before it fails to start. */
const STARTUP_SCHEDULE_TIMEOUT_MS = 20_000;

export class ProcessorRegistryError extends Error {}

/**
 * The worker tier refuses to start unless every job definition has exactly one processor
 * and every processor belongs to a known definition: a job nobody processes would wait
 * forever, and two processors would race.
 */
export function checkProcessors(definitions: JobDefinition[], processors: Processor[]): Map<string, Processor> {
  const problems: string[] = [];
  const byName = new Map<string, Processor>();
  const known = new Set(definitions.map((d) => d.name));
  for (const p of processors) {
    if (!known.has(p.definition.name)) problems.push(`processor for unknown job "${p.definition.name}"`);
    else if (byName.has(p.definition.name)) problems.push(`job "${p.definition.name}" has two processors`);
    else byName.set(p.definition.name, p);
  }
  for (const d of definitions) {
    if (!byName.has(d.name)) problems.push(`job "${d.name}" has no processor`);
  }
  if (problems.length) throw new ProcessorRegistryError(`Worker registry is inconsistent: ${problems.join('; ')}`);
  return byName;
}

export interface WorkerHost {
  workers: Worker[];
  close(): Promise<void>;
}

/**
 * Starts one BullMQ Worker per queue this process serves (WORKER_QUEUES, all by default),
 * each with its own concurrency, all dispatching by job name. The whole registry is checked
 * whatever the pool: a pool that serves only mail still refuses a table with a job nobody
 * processes.
 */
export async function startWorkers(
  services: AppServices,
  connection: RedisClient,
  definitions: JobDefinition[],
  processors: Processor[],
): Promise<WorkerHost> {
  const byName = checkProcessors(definitions, processors);
  const { logger, config } = services;
  const withJobs = new Set(definitions.map((d) => d.queue));
  const pool = config.workerQueues.filter((q) => withJobs.has(q.queue));
  const served = new Set(pool.map((q) => q.queue));

  const workers = pool.map(({ queue, concurrency }) => {
    const worker = new Worker(queue, (job: Job) => runJob(job, byName, services), {
      connection,
      prefix: config.queuePrefix,
      concurrency,
      // Shown as the job's processedBy: which process of which pool took it.
      name: `${hostname()}:${process.pid}`,
      // A killed worker's jobs go back to the queue once their lock lapses.
      lockDuration: config.workerLockMs,
      stalledInterval: Math.min(30_000, config.workerLockMs),
      // Created paused: jobs start only once every worker of the process exists.
      autorun: false,
      // Per-minute outcome counts kept in Redis, which the API's /metrics reads.
      metrics: { maxDataPoints: MetricsTime.ONE_WEEK },
    });
    // Without an error listener a Redis hiccup would be an unhandled 'error' event.
    worker.on('error', (err) => logger.error({ err: err.message, queue }, 'worker error'));
    worker.on('failed', (job, err) =>
      logger.warn({ queue, job_id: job?.id, job_name: job?.name, attempts: job?.attemptsMade, err }, 'job failed'),
    );
    // Wait and run times for /metrics, recorded in Redis because this process serves no HTTP.
    worker.on('active', (job) => recordTiming(services.redis, config.queuePrefix, 'wait', queue, waitSeconds(job)));
    const ran = (job: Job | undefined) => {
      if (job?.processedOn && job.finishedOn)
        recordTiming(services.redis, config.queuePrefix, 'duration', queue, (job.finishedOn - job.processedOn) / 1000);
    };
    worker.on('completed', ran);
    worker.on('failed', ran);
    return worker;
  });
  for (const w of workers) void w.run();
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  // Housekeeping schedules of the queues served here: upserting is idempotent, so every worker process may do it.
  for (const def of definitions.filter((d) => d.schedule && served.has(d.queue))) {
    const { id, everyMs } = def.schedule!;
    await services.jobs.schedule(
      def,
      id,
      typeof everyMs === 'function' ? everyMs(config) : everyMs,
      {},
      STARTUP_SCHEDULE_TIMEOUT_MS,
    );
  }
  logger.info({ queues: pool }, 'workers started');

  return {
    workers,
    // close() waits for the jobs in progress to finish, then stops taking new ones.
    close: async () => {
      await Promise.all(workers.map((w) => w.close()));
    },
  };
}

async function runJob(job: Job, byName: Map<string, Processor>, services: AppServices): Promise<unknown> {
  const logger = services.logger.child({ job_id: job.id, job_name: job.name, queue: job.queueName });
  const isLastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
  const processor = byName.get(job.name);
  if (!processor) return failJob(job, new PermanentJobFailure(`no processor for job "${job.name}"`), { isLastAttempt, logger });
  // The payload came through Redis: trust nothing, re-parse it. A bad payload never becomes good.
  const parsed = processor.definition.schema.safeParse(job.data);
  if (!parsed.success)
    return failJob(job, new PermanentJobFailure(`invalid payload for "${job.name}": ${parsed.error.message}`), {
      isLastAttempt,
      logger,
    });

  const em = services.orm.em.fork() as EntityManager;
  try {
    return await logContext.run({ job_id: job.id, queue: job.queueName }, () =>
      RequestContext.create(em, () => processor.handle(parsed.data, { job, em, services, logger, isLastAttempt })),
    );
  } catch (err) {
    const hook = processor.onFinalFailure;
    return failJob(job, err, {
      isLastAttempt,
      logger,
      record: hook
        ? (reason) =>
            hook(parsed.data, { job, em: services.orm.em.fork() as EntityManager, services, logger, isLastAttempt }, reason)
        : undefined,
    });
  }
}

/** From when the job could run (added, or its delay over) to when a worker took it. */
function waitSeconds(job: Job): number {
  const runnableAt = job.timestamp + (job.delay ?? 0);
  return Math.max(0, ((job.processedOn ?? Date.now()) - runnableAt) / 1000);
}
