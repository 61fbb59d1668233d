import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { JobProducer } from '../jobs/job-producer';
import { ALL_QUEUES } from '../jobs/queues';
import { withTimeout } from './with-timeout';

/**
 * Prometheus metrics of one process. A registry per app instance, so tests can run
 * several apps in one process without clashing names.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route template, method and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics: boolean }) {
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Queue depth and job outcomes, read from Redis at scrape time so the API reports what
   * every worker process did (outcome counts come from BullMQ's per-queue metrics, which
   * the workers record).
   */
  watchQueues(producer: JobProducer): void {
    new Gauge({
      name: 'queue_jobs',
      help: 'Jobs in each queue by state',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        for (const name of ALL_QUEUES) {
          const counts = await safe(
            producer.queue(name).getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized', 'waiting-children'),
          );
          if (!counts) continue;
          for (const [state, n] of Object.entries(counts)) this.set({ queue: name, state }, n);
        }
      },
    });
    new Counter({
      name: 'queue_job_outcomes_total',
      help: 'Jobs finished in each queue by outcome (completed, failed)',
      labelNames: ['queue', 'outcome'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        if (!producer.connected) return;
        const pairs = ALL_QUEUES.flatMap((queue) => (['completed', 'failed'] as const).map((outcome) => ({ queue, outcome })));
        const counts = await Promise.all(pairs.map((p) => safe(producer.queue(p.queue).getMetrics(p.outcome, 0, 0))));
        counts.forEach((m, i) => {
          if (m) this.inc(pairs[i]!, m.meta.count);
        });
      },
    });
  }
}

/** A scrape must not fail because Redis is down: the queue series are then just absent. */
function safe<T>(promise: Promise<T>): Promise<T | undefined> {
  return withTimeout(promise, 1000).catch(() => undefined);
}
