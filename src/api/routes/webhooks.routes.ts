import { z } from 'zod';
import {
  DELIVERY_STATUSES,
  DeliverySchema,
  listDeliveries,
  redeliver,
  RedeliverResultSchema,
} from '../../domain/webhooks/deliveries';
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  queueTestEvent,
  rotateWebhookSecret,
  updateWebhook,
  WebhookCreateSchema,
  WebhookPatchSchema,
  WebhookSchema,
  WebhookSecretRotateSchema,
  WebhookTestResultSchema,
  webhookView,
  type WebhookDeps,
} from '../../domain/webhooks/webhooks';
import { Webhook } from '../../entities/webhook.entity';
import { WebhookDeliverJob } from '../../jobs/webhooks.job';
import type { AppServices } from '../../app-services';
import { asStaff } from '../http/access';
import { findPage } from '../../db/find-page';
import { pageQuery, pageSchema } from '../http/paging';
import { queryBool } from '../http/query';
import { defineRoute, json, type RouteSpec } from '../http/route';

const WebhookId = z.object({ webhook_id: z.uuid() });
const DeliveryId = z.object({ webhook_id: z.uuid(), delivery_id: z.uuid() });

const deps = (services: AppServices): WebhookDeps => ({
  secrets: services.webhookSecrets,
  allowPrivate: services.config.webhooksAllowPrivateUrls,
});

const DELIVERY_DOC =
  'Deliveries are `POST endpoint_url` with body `{"events": [{"id", "type", "created_at", "data"}]}` (at most ' +
  '`batch_size_max` events, in the order they were written), signed per Standard Webhooks: headers `webhook-id` (the ' +
  'delivery id, the same on every retry), `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256 of ' +
  '"<id>.<timestamp>.<body>">` (fresh on every attempt). A 2xx delivers; anything else (redirects are not followed) is ' +
  'retried at 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (±10 %), or after `Retry-After` (1 s to 10 h); 410 turns the ' +
  'webhook off, and so do 5 days of failed attempts (`disabled_reason` says which, with a `webhook.disabled` event). ' +
  'A webhook gets one delivery at a time, so a batch being retried holds back the later ones. Every event carries ' +
  '`sequence`, its place in the order events were written: a redelivered batch arrives after newer ones, so a ' +
  'receiver orders by `sequence` (per account: keep the highest seen, skip lower ones that change the same object). ' +
  'For 24 hours after a secret rotation `webhook-signature` carries two signatures, space-separated (new secret ' +
  'first, then the replaced one), the Standard Webhooks rotation form.';

export const webhookRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/webhooks',
    operationId: 'createWebhook',
    summary: 'Register a webhook endpoint',
    description: `Audited. The secret is write-only: no answer, log or audit row carries it. ${DELIVERY_DOC}`,
    tags: ['webhooks'],
    access: { kind: 'staff', permission: 'manage_webhooks' },
    body: WebhookCreateSchema,
    responses: { 201: { description: 'Created', schema: WebhookSchema } },
    handler: async ({ body, em, caller, services }) =>
      json(201, webhookView(await createWebhook(em, asStaff(caller), deps(services), body))),
  }),
  defineRoute({
    method: 'get',
    path: '/webhooks',
    operationId: 'listWebhooks',
    summary: 'Webhook endpoints, oldest first',
    tags: ['webhooks'],
    access: { kind: 'staff', permission: 'manage_webhooks' },
    query: z.object({ is_active: queryBool().optional(), affiliate_id: z.string().min(1).max(255).optional(), ...pageQuery() }),
    responses: { 200: { description: 'A page of webhooks', schema: pageSchema(WebhookSchema) } },
    handler: async ({ query, em }) => {
      const where: Record<string, unknown> = {};
      if (query.is_active !== undefined) where.isActive = query.is_active;
      if (query.affiliate_id !== undefined) where.affiliateId = query.affiliate_id;
      return json(200, await findPage(em, Webhook, where, query, { orderBy: { createdAt: 'asc', id: 'asc' } }, webhookView));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/webhooks/{webhook_id}',
    operationId: 'getWebhook',
    summary: 'One webhook endpoint',
    tags: ['webhooks'],
    access: { kind: 'staff', permission: 'manage_webhooks' },
    params: WebhookId,
    responses: { 200: { description: 'The webhook', schema: WebhookSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em }) => json(200, webhookView(await findWebhook(em, params.webhook_id))),
  }),
  defineRoute({
    method: 'patch',
    path: '/webhooks/{webhook_id}',
    operationId: 'updateWebhook',
    summary: 'Change a webhook endpoint (endpoint 17)',
    description:
      'Only the fields sent change, with the rules of creation; `null` clears `affiliate_id`, and `events: null` ' +
      'subscribes to every type. A new `secret` is a rotation: the replaced one keeps signing for 24 hours. ' +
      'Turning a webhook on again clears `disabled_reason`; events written while it was off ' +
      'are not sent. Audited (a new secret shows as `secret_changed`, never its value).',
    tags: ['webhooks'],
    access: { kind: 'staff', permission: 'manage_webhooks' },
    params: WebhookId,
    body: WebhookPatchSchema,
    responses: { 200: { description: 'The webhook after the change', schema: WebhookSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, body, em, caller, services }) =>
      json(200, webhookView(await updateWebhook(em, asStaff(caller), deps(services), params.webhook_id, body))),
  }),
  defineRoute({
    method: 'post',
    path: '/webhooks/{webhook_id}/rotate-secret',
    operationId: 'rotateWebhookSecret',
    summary: "Rotate a webhook's signing secret",
    description:
      'The new secret signs every delivery from now on; the replaced one keeps signing beside it for 24 hours ' +
      '(`previous_secret_expires_at`): `webhook-signature` then carries both signatures, space-separated, new first ' +
      '(the Standard Webhooks rotation form), so a receiver verifying with either secret accepts the delivery. ' +
      'Rotating again within the window keeps only the secret just replaced. Audited (`webhook.secret_rotated`, never a value).',
    tags: ['webhooks'],
    access: { kind: 'staff', permission: 'manage_webhooks' },
    params: WebhookId,
    body: WebhookSecretRotateSchema,
    responses: {
      200: { description: 'The webhook after the rotation', schema: WebhookSchema },
      404: { description: 'Not found' },
    },
    handler: async ({ params, body, em, caller, services }) =>
      json(200, webhookView(await rotateWebhookSecret(em, asStaff(caller), deps(services), params.webhook_id, body.secret))),
  }),
  defineRoute({
    method: 'delete',
    path: '/webhooks/{webhook_id}',
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook endpoint with its deliveries',
    tags: ['webhooks'],
    access: { kind: 'staff', permission: 'manage_webhooks' },
    params: WebhookId,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'Not found' } },
    handler: async ({ params, em, caller }) => {
      await deleteWebhook(em, asStaff(caller), params.webhook_id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webhooks/{webhook_id}/test',
    operationId: 'testWebhook',
    summary: 'Send a webhook.test event to this webhook only',
    description:
      'Writes a `webhook.test` event (data: `webhook_id`, `message`) through the outbox; it is delivered to this ' +
      'webhook alone, whatever its `events`, like any other event. 409 `WEBHOOK_INACTIVE` when the webhook is off.',
    tags: ['webhooks'],
    access: { kind: 'staff', permission: 'manage_webhooks' },
    params: WebhookId,
    responses: {
      202: { description: 'Queued', schema: WebhookTestResultSchema },
      404: { description: 'Not found' },
      409: { description: 'WEBHOOK_INACTIVE' },
    },
    handler: async ({ params, em }) => json(202, await queueTestEvent(em, params.webhook_id)),
  }),
  defineRoute({
    method: 'get',
    path: '/webhooks/{webhook_id}/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: "A webhook's deliveries with every attempt, newest first",
    description:
      'Each delivery is one batch of events (its `id` is the `webhook-id` header) with every attempt: status code, ' +
      'duration, error and the first 1 KB of the answer. Filter by `status`.',
    tags: ['webhooks'],
    access: { kind: 'staff', permission: 'manage_webhooks' },
    params: WebhookId,
    query: z.object({ status: z.enum(DELIVERY_STATUSES).optional(), ...pageQuery() }),
    responses: {
      200: { description: 'A page of deliveries', schema: pageSchema(DeliverySchema) },
      404: { description: 'Not found' },
    },
    handler: async ({ params, query, em }) => json(200, await listDeliveries(em, params.webhook_id, query)),
  }),
  defineRoute({
    method: 'post',
    path: '/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver',
    operationId: 'redeliverWebhookDelivery',
    summary: 'Send a delivered or failed delivery again',
    description:
      'The same events under the same `webhook-id` (a receiver that deduplicates on it ignores a batch it already ' +
      'took), with a fresh round of retries. 409 `DELIVERY_PENDING` while it is still being attempted, ' +
      '`WEBHOOK_INACTIVE` when the webhook is off.',
    tags: ['webhooks'],
    access: { kind: 'staff', permission: 'manage_webhooks' },
    params: DeliveryId,
    responses: {
      202: { description: 'Queued', schema: RedeliverResultSchema },
      404: { description: 'Not found' },
      409: { description: 'DELIVERY_PENDING or WEBHOOK_INACTIVE' },
    },
    handler: async ({ params, em, services }) => {
      const result = await redeliver(em, params.webhook_id, params.delivery_id);
      // Committed: a kick lost to Redis waits for the next dispatch run (within a second).
      await services.jobs.enqueue(WebhookDeliverJob, { webhook_id: params.webhook_id }).catch(() => undefined);
      return json(202, result);
    },
  }),
];
