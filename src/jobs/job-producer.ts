import { FlowProducer, Queue, type Job, type JobState } from 'bullmq';
import { Cluster } from 'ioredis';
import { redisReady, type RedisClient } from '../platform/redis';
import type { z } from 'zod';
import { AppError, errors } from '../platform/errors';
import { withTimeout as timeout } from '../platform/with-timeout';
import type { JobDefinition } from './job-definition';
import type { QueueName } from './queues';

const ENQUEUE_TIMEOUT_MS = 2000;

/**
 * The producer side of every queue. It shares one Redis connection whose offline queue is
 * off, so when Redis is down an enqueue fails at once (503 QUEUE_UNAVAILABLE) instead of
 * holding the request open. It never consumes: Workers live only in the worker tier.
 */
export class JobProducer {
  private readonly queues = new Map<QueueName, Queue>();
  private flows?: FlowProducer;

  constructor(
    private readonly connection: RedisClient,
    private readonly prefix: string,
  ) {}

  /** Whether Redis answers right now; when not, every call here fails fast. */
  get connected(): boolean {
    return this.connection.status === 'ready';
  }

  queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: this.connection, prefix: this.prefix });
      // Connection errors surface on the shared client; keep the Queue from crashing the process.
      queue.on('error', () => undefined);
      this.queues.set(name, queue);
    }
    return queue;
  }

  /** Validates the payload against the job's own schema and adds it with the job's options. */
  async enqueue<S extends JobDefinition>(def: S, payload: PayloadInput<S>, opts: { delay?: number } = {}): Promise<Job> {
    const data = def.schema.parse(payload);
    if (this.connection.status !== 'ready') throw errors.queueUnavailable();
    const jobId = def.jobId?.(data);
    return withTimeout(this.queue(def.queue).add(def.name, data, { ...def.options, ...opts, jobId }), ENQUEUE_TIMEOUT_MS);
  }

  /**
   * Makes sure a job with the payload's id is queued: adds it unless one is waiting, delayed
   * or running. A finished one, kept for dashboards, is removed first (its id would make the
   * add a no-op). For jobs with a `jobId` rule only. `delay`: the added job waits that long first.
   */
  async ensureQueued<S extends JobDefinition>(
    def: S,
    payload: PayloadInput<S>,
    opts: { delay?: number } = {},
  ): Promise<'added' | 'replaced' | 'present'> {
    const data = def.schema.parse(payload);
    if (!def.jobId) throw new Error(`job "${def.name}" has no job id rule`);
    if (this.connection.status !== 'ready') throw errors.queueUnavailable();
    const jobId = def.jobId(data);
    const queue = this.queue(def.queue);
    const state = await withTimeout(queue.getJobState(jobId), ENQUEUE_TIMEOUT_MS);
    if (state !== 'unknown' && state !== 'completed' && state !== 'failed') return 'present';
    if (state !== 'unknown') await withTimeout(queue.remove(jobId), ENQUEUE_TIMEOUT_MS);
    await withTimeout(queue.add(def.name, data, { ...def.options, ...opts, jobId }), ENQUEUE_TIMEOUT_MS);
    return state === 'unknown' ? 'added' : 'replaced';
  }

  /**
   * Adds a parent job that runs once all its children are done (a BullMQ flow), every
   * payload checked against its job's schema. Returns the parent, the one job to wait on.
   * `childPriority` (1 first) orders the children among all waiting jobs of their queue.
   */
  async enqueueFlow<P extends JobDefinition, C extends JobDefinition>(
    parent: P,
    parentPayload: PayloadInput<P>,
    child: C,
    childPayloads: Array<PayloadInput<C>>,
    childPriority?: (index: number) => number,
  ): Promise<Job> {
    const parentData = parent.schema.parse(parentPayload);
    const children = childPayloads.map((p) => child.schema.parse(p));
    if (this.connection.status !== 'ready') throw errors.queueUnavailable();
    this.flows ??= new FlowProducer({ connection: this.connection, prefix: this.prefix });
    const node = await withTimeout(
      this.flows.add({
        name: parent.name,
        queueName: parent.queue,
        data: parentData,
        opts: { ...parent.options, jobId: parent.jobId?.(parentData) },
        children: children.map((data, index) => ({
          name: child.name,
          queueName: child.queue,
          data,
          opts: {
            ...child.options,
            jobId: child.jobId?.(data),
            ...(childPriority ? { priority: childPriority(index) } : {}),
          },
        })),
      }),
      ENQUEUE_TIMEOUT_MS * 5,
    );
    return node.job;
  }

  /**
   * Where a job with the payload's id stands, asked on a connection of its own: after an
   * enqueue timed out, the reply may be what was lost while the job landed, and the shared
   * connection's stream is then not to be trusted. `unknown`: no such job; `unreachable`:
   * Redis did not answer in time either, so nobody can tell. For jobs with a `jobId` rule only.
   */
  async jobState<S extends JobDefinition>(def: S, payload: PayloadInput<S>): Promise<JobState | 'unknown' | 'unreachable'> {
    const data = def.schema.parse(payload);
    if (!def.jobId) throw new Error(`job "${def.name}" has no job id rule`);
    const probe: RedisClient = this.connection instanceof Cluster ? this.connection.duplicate() : this.connection.duplicate();
    probe.on('error', () => undefined);
    const queue = new Queue(def.queue, { connection: probe, prefix: this.prefix });
    queue.on('error', () => undefined);
    try {
      if (!(await redisReady(probe, ENQUEUE_TIMEOUT_MS))) return 'unreachable';
      return await timeout(queue.getJobState(def.jobId(data)), ENQUEUE_TIMEOUT_MS);
    } catch {
      return 'unreachable';
    } finally {
      await queue.close().catch(() => undefined);
      probe.disconnect();
    }
  }

  /**
   * Runs a job every `everyMs` under a fixed scheduler id (BullMQ job schedulers): calling
   * it again replaces the schedule and payload, and only one schedule exists per id.
   * `timeoutMs`: a request keeps the enqueue bound; a process starting up, whose Redis may
   * still be busy with every other process starting, may wait longer before giving up.
   */
  async schedule<S extends JobDefinition>(
    def: S,
    schedulerId: string,
    everyMs: number,
    payload: PayloadInput<S>,
    timeoutMs = ENQUEUE_TIMEOUT_MS,
  ): Promise<void> {
    const data = def.schema.parse(payload);
    if (this.connection.status !== 'ready') throw errors.queueUnavailable();
    const { attempts: _attempts, backoff: _backoff, ...opts } = def.options;
    // A scheduled run is not retried: the next tick is the retry.
    await withTimeout(
      this.queue(def.queue).upsertJobScheduler(schedulerId, { every: everyMs }, { name: def.name, data, opts }),
      timeoutMs,
    );
  }

  /**
   * Runs a job on a cron pattern (UTC) under a fixed scheduler id: one schedule per id in the
   * deployment, however many processes upsert it, and upserting again replaces the pattern.
   */
  async scheduleCron<S extends JobDefinition>(
    def: S,
    schedulerId: string,
    pattern: string,
    payload: PayloadInput<S>,
  ): Promise<void> {
    const data = def.schema.parse(payload);
    if (this.connection.status !== 'ready') throw errors.queueUnavailable();
    const { attempts: _attempts, backoff: _backoff, ...opts } = def.options;
    await withTimeout(
      this.queue(def.queue).upsertJobScheduler(schedulerId, { pattern, tz: 'UTC' }, { name: def.name, data, opts }),
      ENQUEUE_TIMEOUT_MS,
    );
  }

  /** The cron pattern of a scheduler id, or undefined when it has none. */
  async scheduledPattern(def: JobDefinition, schedulerId: string): Promise<string | undefined> {
    if (this.connection.status !== 'ready') throw errors.queueUnavailable();
    const found = await withTimeout(this.queue(def.queue).getJobScheduler(schedulerId), ENQUEUE_TIMEOUT_MS);
    return found?.pattern ?? undefined;
  }

  async unschedule(def: JobDefinition, schedulerId: string): Promise<void> {
    if (this.connection.status !== 'ready') throw errors.queueUnavailable();
    await withTimeout(this.queue(def.queue).removeJobScheduler(schedulerId), ENQUEUE_TIMEOUT_MS);
  }

  /** The current schedule of an id: its interval and payload, or undefined when none. */
  async scheduled<S extends JobDefinition>(
    def: S,
    schedulerId: string,
  ): Promise<{ everyMs: number; payload: unknown } | undefined> {
    if (this.connection.status !== 'ready') throw errors.queueUnavailable();
    const found = await withTimeout(this.queue(def.queue).getJobScheduler(schedulerId), ENQUEUE_TIMEOUT_MS);
    return found?.every ? { everyMs: found.every, payload: found.template?.data } : undefined;
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
    await this.flows?.close();
  }
}

type PayloadInput<D extends JobDefinition> = z.input<D['schema']>;

/** Any failure to reach Redis in time, or a refused command, is "queue unavailable", not a bug. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return timeout(promise, ms).catch((err: unknown) => {
    throw err instanceof AppError ? err : errors.queueUnavailable();
  });
}
