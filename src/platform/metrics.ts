import type { Queue } from 'bullmq';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RedisClient } from './redis';
import { readTiming, type HistogramSnapshot } from './queue-timings';
import { readUnsealFailures } from './unseal-failures';
import { withTimeout } from './with-timeout';

/** What the queue metrics read: the producer side of the queues (the JobProducer). */
export interface WatchedQueues<Q extends string> {
  /** Whether Redis answers right now; when not, the outcome counts are left out. */
  readonly connected: boolean;
  queue(name: Q): Pick<Queue, 'getJobs' | 'getJobCounts' | 'getMetrics'>;
}

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

  /** Server-sent event streams this process holds open, by kind (quotes, customer, backoffice). */
  readonly streamsOpen = new Gauge({
    name: 'sse_streams_open',
    help: 'Open server-sent event streams of this process, by kind',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  readonly streamEventsSent = new Counter({
    name: 'sse_events_sent_total',
    help: 'Events written to server-sent event streams, by stream kind',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  constructor(options: { defaultMetrics: boolean }) {
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Queue depth and job outcomes, read from Redis at scrape time so the API reports what
   * every worker process did (outcome counts come from BullMQ's per-queue metrics, which
   * the workers record). The composition root names the queues: platform code knows no jobs.
   */
  watchQueues<Q extends string>(names: readonly Q[], queues: WatchedQueues<Q>, redis: RedisClient, prefix: string): void {
    new Gauge({
      name: 'queue_oldest_waiting_seconds',
      help: 'Age of the oldest job waiting in each queue (0 when none): what to autoscale worker pools on',
      labelNames: ['queue'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        const oldest = await Promise.all(names.map((q) => safe(queues.queue(q).getJobs(['waiting', 'prioritized'], 0, 0, true))));
        const now = Date.now();
        oldest.forEach((jobs, i) => {
          if (!jobs) return;
          const job = jobs[0];
          this.set({ queue: names[i]! }, job ? Math.max(0, (now - job.timestamp - (job.delay ?? 0)) / 1000) : 0);
        });
      },
    });
    for (const [kind, help] of [
      ['wait', 'Seconds from when a job could run to when a worker took it, by queue'],
      ['duration', 'Seconds a job ran, by queue'],
    ] as const) {
      this.registry.registerMetric(
        redisHistogram(`queue_job_${kind}_seconds`, help, names, (queue) => readTiming(redis, prefix, kind, queue)) as never,
      );
    }
    new Gauge({
      name: 'queue_jobs',
      help: 'Jobs in each queue by state',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        for (const name of names) {
          const counts = await safe(
            queues.queue(name).getJobCounts('waiting', 'active', 'delayed', 'failed', 'prioritized', 'waiting-children'),
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
        if (!queues.connected) return;
        const pairs = names.flatMap((queue) => (['completed', 'failed'] as const).map((outcome) => ({ queue, outcome })));
        const counts = await Promise.all(pairs.map((p) => safe(queues.queue(p.queue).getMetrics(p.outcome, 0, 0))));
        counts.forEach((m, i) => {
          if (m) this.inc(pairs[i]!, m.meta.count);
        });
      },
    });
  }

  /**
   * `secrets_unseal_failures_total`: sealed values no process could open, by purpose (what
   * kind of secret) and reason (unknown_key, tampered, malformed, legacy_key_missing). Any
   * increase is a key configuration fault: alert on it.
   */
  watchUnsealFailures(redis: RedisClient, prefix: string): void {
    new Counter({
      name: 'secrets_unseal_failures_total',
      help: 'Sealed secrets that could not be unsealed, by purpose and reason, across every process of the deployment',
      labelNames: ['purpose', 'reason'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        const counts = await safe(readUnsealFailures(redis, prefix));
        for (const c of counts ?? []) this.inc({ purpose: c.purpose, reason: c.reason }, c.count);
      },
    });
  }

  /**
   * The outbox relay's lag: how long the oldest unpublished domain event has waited, read at
   * scrape time (`lagSeconds` reads one entry of the partial index of unpublished events).
   * NaN when Postgres does not answer in time: unknown, not "no lag".
   */
  watchOutbox(lagSeconds: () => Promise<number>): void {
    new Gauge({
      name: 'outbox_oldest_unpublished_seconds',
      help: 'Age of the oldest domain event the outbox relay has not handed to its consumers yet (0 when none)',
      registers: [this.registry],
      async collect() {
        const lag = await safe(lagSeconds());
        this.set(lag ?? Number.NaN);
      },
    });
  }

  /**
   * The read replica as this process's last probe saw it: `db_replica_up` (1 answering, 0 not)
   * and `db_replica_lag_seconds` (NaN while it does not answer); and the counter it answers,
   * `db_replica_fallbacks_total{reason}`: reads meant for it that the primary served. Only a
   * process with a replica configured has these series.
   */
  watchReplica(read: () => { up: boolean; lagMs: number | null }): (reason: string) => void {
    const fallbacks = new Counter({
      name: 'db_replica_fallbacks_total',
      help: 'Reads meant for the read replica that went to the primary, by reason (down, lagging, behind, failed)',
      labelNames: ['reason'] as const,
      registers: [this.registry],
    });
    new Gauge({
      name: 'db_replica_up',
      help: 'Whether the read replica answered the last probe (1) or not (0)',
      registers: [this.registry],
      collect() {
        this.set(read().up ? 1 : 0);
      },
    });
    new Gauge({
      name: 'db_replica_lag_seconds',
      help: 'How far the read replica was behind the primary at the last probe (NaN when it did not answer)',
      registers: [this.registry],
      collect() {
        const { lagMs } = read();
        this.set(lagMs === null ? Number.NaN : lagMs / 1000);
      },
    });
    return (reason) => fallbacks.inc({ reason });
  }

  /**
   * A run's progress (the end of day's), read at scrape time from the run rows: one series per
   * run and state (total, done, failed, pending), labelled with its trading date and status.
   */
  watchRunProgress(
    name: string,
    help: string,
    read: () => Promise<Array<{ trading_date: string; status: string; total: number; done: number; failed: number }>>,
  ): void {
    new Gauge({
      name,
      help,
      labelNames: ['trading_date', 'status', 'state'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        for (const r of (await safe(read())) ?? []) {
          const labels = { trading_date: r.trading_date, status: r.status };
          this.set({ ...labels, state: 'total' }, r.total);
          this.set({ ...labels, state: 'done' }, r.done);
          this.set({ ...labels, state: 'failed' }, r.failed);
          this.set({ ...labels, state: 'pending' }, Math.max(0, r.total - r.done - r.failed));
        }
      },
    });
  }
}

/** A scrape must not fail because Redis or Postgres is down: the series read from them are then just absent or NaN. */
function safe<T>(promise: Promise<T>): Promise<T | undefined> {
  return withTimeout(promise, 1000).catch(() => undefined);
}

/**
 * A histogram whose counts live in Redis (written by every worker process, see
 * queue-timings.ts), shaped as prom-client renders a histogram. Queues that Redis cannot
 * answer for in time are left out of the scrape.
 */
function redisHistogram(
  name: string,
  help: string,
  names: readonly string[],
  read: (queue: string) => Promise<HistogramSnapshot>,
) {
  return {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    reset: () => undefined,
    async get() {
      const snapshots = await Promise.all(names.map((q) => safe(read(q))));
      const values = snapshots.flatMap((s, i) => {
        if (!s) return [];
        const queue = names[i]!;
        return [
          ...s.buckets.map((b) => ({ metricName: `${name}_bucket`, labels: { queue, le: b.le }, value: b.count })),
          { metricName: `${name}_sum`, labels: { queue }, value: s.sum },
          { metricName: `${name}_count`, labels: { queue }, value: s.count },
        ];
      });
      return { name, help, type: 'histogram', aggregator: 'sum', values };
    },
  };
}
