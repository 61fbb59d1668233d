import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { errors } from '../../platform/errors';
import { findWebhook } from './webhooks';
import { executeNamed } from '../../db/bound-statement';
import { inOneSnapshot } from '../../db/find-page';
import { COUNT_DELIVERIES, DELIVERY_PAGE, LOCK_DELIVERY, LOCK_WEBHOOK, REOPEN_DELIVERY } from './webhooks.queries';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

export const AttemptSchema = z.object({
  attempt: z.int().describe('1 for the first try; numbering goes on across redeliveries'),
  started_at: z.iso.datetime(),
  duration_ms: z.int(),
  status_code: z.int().nullable().describe('The HTTP status answered; null when none came (timeout, refused, DNS)'),
  error: z.string().nullable().describe('Why the attempt failed; null when it succeeded'),
  response_body: z.string().nullable().describe('The first 1 KB of the answer, as UTF-8 text'),
});

export const DeliverySchema = z.object({
  id: z.uuid().describe('The `webhook-id` header of every attempt of this delivery'),
  webhook_id: z.uuid(),
  status: z.enum(DELIVERY_STATUSES),
  event_count: z.int(),
  event_ids: z.array(z.uuid()).describe('The events it carries, in the order sent'),
  attempts_in_round: z.int().describe('Attempts since it was created or last redelivered (8 at most)'),
  next_attempt_at: z.iso.datetime().nullable().describe('When the next attempt is due; null unless pending'),
  delivered_at: z.iso.datetime().nullable(),
  created_at: z.iso.datetime(),
  attempts: z.array(AttemptSchema).describe('Every attempt, oldest first'),
});
export type DeliveryView = z.output<typeof DeliverySchema>;

interface DeliveryRow {
  id: string;
  webhook_id: string;
  status: (typeof DELIVERY_STATUSES)[number];
  event_count: number;
  event_ids: string[];
  attempts_in_round: number;
  next_attempt_at: Date;
  delivered_at: Date | null;
  created_at: Date;
  attempts: Array<Omit<z.output<typeof AttemptSchema>, 'started_at'> & { started_at: string }> | null;
}

const iso = (d: Date | string) => new Date(d).toISOString();

function deliveryView(r: DeliveryRow): DeliveryView {
  return {
    id: r.id,
    webhook_id: r.webhook_id,
    status: r.status,
    event_count: r.event_count,
    event_ids: r.event_ids ?? [],
    attempts_in_round: r.attempts_in_round,
    next_attempt_at: r.status === 'pending' ? iso(r.next_attempt_at) : null,
    delivered_at: r.delivered_at ? iso(r.delivered_at) : null,
    created_at: iso(r.created_at),
    attempts: (r.attempts ?? []).map((a) => ({ ...a, started_at: iso(a.started_at) })),
  };
}

/** A page of a webhook's deliveries, newest first, each with every attempt. */
export async function listDeliveries(
  em: EntityManager,
  webhookId: string,
  query: { status?: (typeof DELIVERY_STATUSES)[number]; page: number; page_size: number },
) {
  await findWebhook(em, webhookId);
  const status = query.status ?? null;
  // The count and the page in one snapshot: deliveries change state while a busy webhook is read.
  return inOneSnapshot(em, async (tx) => {
    const [count] = await executeNamed<{ n: string }>(tx, COUNT_DELIVERIES.bind({ webhook_id: webhookId, status }));
    const rows = await executeNamed<DeliveryRow>(
      tx,
      DELIVERY_PAGE.bind({ webhook_id: webhookId, status, limit: query.page_size, offset: (query.page - 1) * query.page_size }),
    );
    return { items: rows.map(deliveryView), page: query.page, page_size: query.page_size, total: Number(count!.n) };
  });
}

export const RedeliverResultSchema = z.object({ delivery_id: z.uuid(), status: z.literal('pending'), detail: z.string() });

/**
 * Sends a finished delivery again, as it was (same `webhook-id`, same events: a receiver that
 * deduplicates on the id ignores it), with a fresh round of the retry schedule.
 */
export async function redeliver(em: EntityManager, webhookId: string, deliveryId: string) {
  return em.transactional(async (tx) => {
    const [webhook] = await executeNamed<{ is_active: boolean }>(tx, LOCK_WEBHOOK.bind({ webhook_id: webhookId }));
    if (!webhook) throw errors.notFound('Webhook');
    const [delivery] = await executeNamed<{ status: string }>(
      tx,
      LOCK_DELIVERY.bind({ delivery_id: deliveryId, webhook_id: webhookId }),
    );
    if (!delivery) throw errors.notFound('Delivery');
    if (!webhook.is_active) throw errors.conflict('WEBHOOK_INACTIVE', 'The webhook is not active; turn it on first');
    if (delivery.status === 'pending') throw errors.conflict('DELIVERY_PENDING', 'This delivery is still being attempted');
    await executeNamed(tx, REOPEN_DELIVERY.bind({ delivery_id: deliveryId }));
    return { delivery_id: deliveryId, status: 'pending' as const, detail: 'The delivery is queued to be sent again' };
  });
}
