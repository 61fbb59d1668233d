import { Queue, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { errors } from '../platform/errors';
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

  constructor(
    private readonly connection: Redis,
    private readonly prefix: string,
  ) {}

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

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }
}

type PayloadInput<D extends JobDefinition> = D['schema'] extends { _zod: { input: infer I } } ? I : never;

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(errors.queueUnavailable()), ms);
  });
  return Promise.race([promise, timeout])
    .catch((err: unknown) => {
      // A command refused by a closed or offline connection is "queue unavailable", not a bug.
      if (err instanceof Error && !('status' in err)) throw errors.queueUnavailable();
      throw err;
    })
    .finally(() => clearTimeout(timer));
}
