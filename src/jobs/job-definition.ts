import type { JobsOptions } from 'bullmq';
import type { z } from 'zod';
import type { Config } from '../config/config';
import type { QueueName } from './queues';

/**
 * The contract of one job, shared by its producer (the API or another worker) and its
 * processor: the name, the queue it lives in, the payload schema, retry options, and the
 * rule that derives its job id from the payload (so enqueueing twice is harmless).
 * A definition never imports its processor.
 */
export interface JobDefinition<N extends string = string, S extends z.ZodType = z.ZodType> {
  name: N;
  queue: QueueName;
  schema: S;
  options: JobsOptions & { attempts: number };
  /** BullMQ job ids may not contain ':' . */
  jobId?: (payload: z.output<S>) => string;
  /** A housekeeping job the worker tier keeps scheduled (with an empty payload) while it runs. */
  schedule?: { id: string; everyMs: number | ((config: Config) => number) };
}

export type PayloadOf<D extends JobDefinition> = z.output<D['schema']>;

export function defineJob<N extends string, S extends z.ZodType>(def: JobDefinition<N, S>): JobDefinition<N, S> {
  return def;
}

/** Retries that back off 1 s, 2 s, 4 s, ... and keep a bounded history for dashboards. */
export function retryPolicy(attempts: number, firstDelayMs = 1000): JobsOptions & { attempts: number } {
  return {
    attempts,
    backoff: { type: 'exponential', delay: firstDelayMs },
    removeOnComplete: { age: 24 * 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600 },
  };
}
