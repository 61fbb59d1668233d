import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { AppServices } from '../app-services';
import { deliverWebhook } from '../domain/webhooks/delivery';
import { dispatchWebhooks } from '../domain/webhooks/dispatch';
import { WebhookDeliverJob, WebhooksDispatchJob } from '../jobs/webhooks.job';
import { coalescing } from './coalesce';
import { defineProcessor } from './processor';

/** Inbox rows fanned out per transaction. */
const FAN_OUT_BATCH = 1000;
/** Longest a run keeps starting batches or deliveries (at most a third of the job lock, as the relay's). */
const BUDGET_MS = 5000;
const budgetOf = (workerLockMs: number) => Math.min(BUDGET_MS, workerLockMs / 3);
/**
 * How often this process looks for webhooks with deliveries due: the dispatch schedule's
 * period. A run kicked by the relay is about the rows it just handed over; asking the
 * deliveries table on every one of them would cost a query per commit.
 */
const DUE_LOOK_EVERY_MS = 1000;
let lastDueLook = Number.NEGATIVE_INFINITY;

/** A dispatch run; runs of one runtime coalesce (a kick during a run makes it fan out once more). */
const dispatch = coalescing((services: AppServices, em: EntityManager, logger: Logger) => {
  const lookForDue = Date.now() - lastDueLook >= DUE_LOOK_EVERY_MS;
  if (lookForDue) lastDueLook = Date.now();
  return dispatchWebhooks(em, {
    batchSize: FAN_OUT_BATCH,
    lookForDue,
    budgetMs: budgetOf(services.config.workerLockMs),
    // In parallel: most are no-ops (the webhook's job is already waiting).
    kick: async (ids, after) => {
      await Promise.all(
        ids.map((webhook_id) =>
          services.jobs.enqueue(WebhookDeliverJob, { webhook_id, after }).catch((err: unknown) => {
            logger.warn({ webhook_id, err: (err as Error).message }, 'could not queue a webhook delivery');
          }),
        ),
      );
    },
  });
});

export const webhooksDispatchProcessor = defineProcessor(WebhooksDispatchJob, async (_payload, { em, services, logger }) =>
  dispatch(services, em, logger),
);

export const webhookDeliverProcessor = defineProcessor(WebhookDeliverJob, async (payload, { em, services, logger }) => {
  const result = await deliverWebhook(em, payload.webhook_id, {
    sender: services.webhookSender,
    secrets: services.webhookSecrets,
    timeoutMs: services.config.webhookTimeoutMs,
    budgetMs: budgetOf(services.config.workerLockMs),
  });
  if (result.more) {
    // Behind the other webhooks' jobs, so a busy webhook does not keep a slot; the schedule covers a lost add.
    const turn = payload.turn === 1 ? 2 : 1;
    await services.jobs.enqueue(WebhookDeliverJob, { webhook_id: payload.webhook_id, turn }).catch((err: unknown) => {
      logger.warn({ webhook_id: payload.webhook_id, err: (err as Error).message }, 'could not queue a webhook continuation');
    });
  }
  return result;
});
