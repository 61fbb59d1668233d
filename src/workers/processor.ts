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

export interface Processor<D extends JobDefinition = JobDefinition> {
  definition: D;
  handle(payload: PayloadOf<D>, ctx: JobContext): Promise<unknown>;
}

export function defineProcessor<D extends JobDefinition>(
  definition: D,
  handle: (payload: PayloadOf<D>, ctx: JobContext) => Promise<unknown>,
): Processor {
  return { definition, handle } as unknown as Processor;
}
