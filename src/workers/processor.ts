import type { Job } from 'bullmq';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { JobDefinition, PayloadOf } from '../jobs/job-definition';
import type { AppServices } from '../app-services';

export interface JobContext {
  job: Job;
  /** This job's own unit of work (a fork), never the global EntityManager. */
  em: EntityManager;
  services: AppServices;
  logger: Logger;
  /** True when a failure now is final: no retry follows. */
  isLastAttempt: boolean;
}

/**
 * Records a job's final failure where the API reads its outcome (see failJob): `reason` is
 * the permanent failure's message, or null when the job ran out of attempts. `ctx.em` is a
 * fresh unit of work, as the job's own may hold the failed change.
 */
export type FinalFailureHook<P> = (payload: P, ctx: JobContext, reason: string | null) => Promise<void>;

export interface Processor<D extends JobDefinition = JobDefinition> {
  definition: D;
  handle(payload: PayloadOf<D>, ctx: JobContext): Promise<unknown>;
  onFinalFailure?: FinalFailureHook<PayloadOf<D>>;
}

export function defineProcessor<D extends JobDefinition>(
  definition: D,
  handle: (payload: PayloadOf<D>, ctx: JobContext) => Promise<unknown>,
  onFinalFailure?: FinalFailureHook<PayloadOf<D>>,
): Processor {
  return { definition, handle, onFinalFailure } as unknown as Processor;
}
