import { z } from 'zod';
import { defineJob } from './job-definition';
import { QUEUES } from './queues';

/**
 * The outbox relay (domain/events/relay.ts): hands unpublished domain events to their
 * consumers, and re-adds the send job of mails still queued after MAIL_REQUEUE_AFTER_SECONDS
 * (domain/mail/mail-outbox.ts). Runs every OUTBOX_RELAY_INTERVAL_MS on a schedule the worker
 * tier keeps, and as events commit (`woken`, queued by workers/outbox-wake.ts; such a run
 * relays events only).
 */
export const OutboxRelayJob = defineJob({
  name: 'outbox-relay',
  queue: QUEUES.events,
  schema: z.object({ woken: z.boolean().optional() }),
  // A failed run is superseded by the next one, which starts from the same unpublished rows.
  options: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 1000 } },
  schedule: { id: 'outbox-relay', everyMs: (config) => config.outboxRelay.intervalMs },
});
