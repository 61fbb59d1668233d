import { z } from 'zod';
import { defineJob } from './job-definition';
import { QUEUES } from './queues';

/**
 * The webhooks' schedule (domain/webhooks/dispatch.ts): every second, makes sure every webhook
 * with work due has a delivery job: retries that have come due, deliveries a killed worker
 * left behind, and events past a webhook's cursor whose kick was lost. The outbox relay queues
 * the delivery of the webhooks that may take the events it publishes itself.
 */
export const WebhooksDispatchJob = defineJob({
  name: 'webhooks-dispatch',
  queue: QUEUES.webhooks,
  schema: z.object({}),
  // A failed run is superseded by the next one, which starts from the same rows.
  options: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 1000 } },
  schedule: { id: 'webhooks-dispatch', everyMs: 1000 },
});

/**
 * Delivers one webhook's due batches, one at a time and in order (domain/webhooks/delivery.ts).
 * The schedule's kicks share one job id per webhook (a continuation alternates two more),
 * removed when it ends so the next kick can add it again. The relay's kick for events it just published
 * carries their last publication number in its id: a run about to end (whose id a plain kick would
 * hit, and be dropped) must not swallow it. Two running at once is harmless (the claim decides). Retries are the delivery rows' own schedule, not the job's: a failed attempt records
 * when the next is due and the job ends, freeing the worker slot.
 */
export const WebhookDeliverJob = defineJob({
  name: 'webhook-deliver',
  queue: QUEUES.webhooks,
  // `turn` 1 or 2: a continuation queued by a run that spent its budget (it cannot re-add its own id while running).
  // `after`: the publication_seq of the last event published when the kick was sent (decimal text).
  schema: z.object({
    webhook_id: z.uuid(),
    turn: z.union([z.literal(1), z.literal(2)]).optional(),
    after: z
      .string()
      .regex(/^\d{1,19}$/)
      .optional(),
  }),
  options: { attempts: 1, removeOnComplete: true, removeOnFail: true },
  jobId: (p) =>
    p.turn ? `webhook-${p.webhook_id}-t${p.turn}` : p.after ? `webhook-${p.webhook_id}-e${p.after}` : `webhook-${p.webhook_id}`,
});
