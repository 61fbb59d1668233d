import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { AppServices } from '../app-services';
import { relayEvents } from '../domain/events/relay';
import { publishLive } from '../domain/streams/live-feed';
import { requeueStaleMail } from '../domain/mail/mail-outbox';
import { OutboxRelayJob } from '../jobs/outbox-relay.job';
import { coalescing } from './coalesce';
import { defineProcessor } from './processor';

/** Longest a run keeps starting batches: well inside the job lock, so a run is never taken for stalled. */
const BUDGET_MS = 5000;
/** Stale mails looked at per run; a backlog is worked through run by run. */
const MAIL_REQUEUE_LIMIT = 100;

/** The events part of a run; runs of one runtime coalesce (a wake during a run makes it relay once more). */
const relay = coalescing((services: AppServices, em: EntityManager, logger: Logger) => {
  const { config, eventConsumers, jobs } = services;
  return relayEvents(em, eventConsumers, {
    batchSize: config.outboxRelay.batchSize,
    budgetMs: Math.min(BUDGET_MS, config.workerLockMs / 3),
    // The rows are committed: a job lost to Redis only delays the consumer until its own schedule.
    afterCommit: (queued) =>
      Promise.all(
        queued.map(({ job, payload }) =>
          jobs.enqueue(job, payload).catch((err: unknown) => {
            logger.warn({ job: job.name, err: (err as Error).message }, 'could not queue an event consumer job');
          }),
        ),
      ).then(() => undefined),
    // Committed: a message lost to Redis reaches a stream's client only when it resumes (Last-Event-ID).
    afterPublish: (published) =>
      publishLive(services.redis, config.queuePrefix, published).catch((err: unknown) => {
        logger.warn({ err: (err as Error).message }, 'could not publish events to the live feed');
      }),
  });
});

export const outboxRelayProcessor = defineProcessor(OutboxRelayJob, async (payload, { em, services, logger }) => {
  const { config, jobs } = services;
  // Events and mail are independent: a failure of one must not starve the other.
  let failure: unknown;
  const events = await relay(services, em, logger).catch((err: unknown) => {
    failure = err;
    return undefined;
  });
  if (events && events !== 'coalesced' && events.published)
    logger.debug({ published: events.published, handed: events.handed }, 'outbox events relayed');
  // A run woken by commits is about those events; stale mail is the schedule's business.
  if (payload.woken) {
    if (failure) throw failure;
    return { events };
  }

  const mail = await requeueStaleMail(em, jobs, { afterSeconds: config.mailRequeueAfterSeconds, limit: MAIL_REQUEUE_LIMIT });
  if (mail.requeued) logger.info({ requeued: mail.requeued }, 'queued mails without a send job re-queued');
  if (mail.orphaned) logger.warn({ orphaned: mail.orphaned }, 'mails left sending by a dead worker marked unknown');
  if (failure) throw failure;
  return { events, mail };
});
