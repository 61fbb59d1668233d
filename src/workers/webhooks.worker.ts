import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { AppServices } from '../app-services';
import { deliverWebhook } from '../domain/webhooks/delivery';
import { webhooksDue } from '../domain/webhooks/dispatch';
import { WebhookDeliverJob, WebhooksDispatchJob } from '../jobs/webhooks.job';
import { defineProcessor } from './processor';

/** Longest a delivery run keeps starting deliveries (at most a third of the job lock, as the relay's). */
const BUDGET_MS = 5000;
const budgetOf = (workerLockMs: number) => Math.min(BUDGET_MS, workerLockMs / 3);

/** The schedule's look for webhooks with work due (retries, lost kicks, lapsed leases). */
async function kickDue(services: AppServices, em: EntityManager, logger: Logger) {
  const due = await webhooksDue(em);
  // In parallel: most are no-ops (the webhook's job is already waiting).
  await Promise.all(
    due.map((webhook_id) =>
      services.jobs.enqueue(WebhookDeliverJob, { webhook_id }).catch((err: unknown) => {
        logger.warn({ webhook_id, err: (err as Error).message }, 'could not queue a webhook delivery');
      }),
    ),
  );
  return { kicked: due.length };
}

export const webhooksDispatchProcessor = defineProcessor(WebhooksDispatchJob, async (_payload, { em, services, logger }) =>
  kickDue(services, em, logger),
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
