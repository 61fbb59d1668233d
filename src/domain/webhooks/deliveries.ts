import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { errors } from '../../platform/errors';
import { findWebhook } from './webhooks';

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
  const filter = query.status ? 'and d.status = ?' : '';
  const params = query.status ? [webhookId, query.status] : [webhookId];
  const [count] = await em.execute<Array<{ n: string }>>(
    `select count(*) as n from webhook_deliveries d where d.webhook_id = ? ${filter}`,
    params,
  );
  const rows = await em.execute<DeliveryRow[]>(
    `select d.id, d.webhook_id, d.status, d.event_count, d.attempts as attempts_in_round, d.next_attempt_at, d.delivered_at, d.created_at,
            (select json_agg(m.event_id order by m.event_seq) from webhook_messages m where m.delivery_id = d.id) as event_ids,
            (select json_agg(json_build_object('attempt', a.attempt, 'started_at', a.started_at, 'duration_ms', a.duration_ms,
                    'status_code', a.status_code, 'error', a.error, 'response_body', a.response_body) order by a.attempt)
               from webhook_attempts a where a.delivery_id = d.id) as attempts
       from webhook_deliveries d where d.webhook_id = ? ${filter}
      order by d.created_at desc, d.first_event_seq desc limit ? offset ?`,
    [...params, query.page_size, (query.page - 1) * query.page_size],
  );
  return { items: rows.map(deliveryView), page: query.page, page_size: query.page_size, total: Number(count!.n) };
}

export const RedeliverResultSchema = z.object({ delivery_id: z.uuid(), status: z.literal('pending'), detail: z.string() });

/**
 * Sends a finished delivery again, as it was (same `webhook-id`, same events: a receiver that
 * deduplicates on the id ignores it), with a fresh round of the retry schedule.
 */
export async function redeliver(em: EntityManager, webhookId: string, deliveryId: string) {
  return em.transactional(async (tx) => {
    const [webhook] = await tx.execute<Array<{ is_active: boolean }>>('select is_active from webhooks where id = ? for update', [
      webhookId,
    ]);
    if (!webhook) throw errors.notFound('Webhook');
    const [delivery] = await tx.execute<Array<{ status: string }>>(
      'select status from webhook_deliveries where id = ? and webhook_id = ? for update',
      [deliveryId, webhookId],
    );
    if (!delivery) throw errors.notFound('Delivery');
    if (!webhook.is_active) throw errors.conflict('WEBHOOK_INACTIVE', 'The webhook is not active; turn it on first');
    if (delivery.status === 'pending') throw errors.conflict('DELIVERY_PENDING', 'This delivery is still being attempted');
    await tx.execute(
      `update webhook_deliveries set status = 'pending', attempts = 0, next_attempt_at = now(), lease_until = null,
              delivered_at = null, updated_at = now() where id = ?`,
      [deliveryId],
    );
    return { delivery_id: deliveryId, status: 'pending' as const, detail: 'The delivery is queued to be sent again' };
  });
}
