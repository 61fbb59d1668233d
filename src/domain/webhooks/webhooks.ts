import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Webhook } from '../../entities/webhook.entity';
import type { SecretBox } from '../../platform/secret-box';
import { errors, fieldError } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import { EVENT_TYPES } from '../events/event-types';
import { recordEvent } from '../events/outbox';
import { holdRelay } from '../events/relay';
import { executeNamed } from '../../db/bound-statement';
import { PAUSE_WEBHOOK, RESUME_WEBHOOK } from './webhooks.queries';
import type { StaffCaller } from '../../platform/caller';
import { previousSecretValidUntil, rotateSealedSecret } from '../../platform/rotating-secret';
import { signingSecretField } from './signature';
import { checkEndpoint, EndpointRefused, type Lookup } from './url-guard';

const BATCH_SIZE_MAX_LIMIT = 1000;
export const BATCH_SIZE_MAX_DEFAULT = 100;

const EventTypeList = z
  .array(z.enum(EVENT_TYPES))
  .min(1)
  .max(EVENT_TYPES.length)
  .describe('Event types this webhook receives; omitted or null: every type, including types added later');

const Secret = signingSecretField(
  'Write-only signing secret: at least 24 characters (the key is its UTF-8 bytes), or `whsec_` followed by the ' +
    'base64 of 24 to 64 random bytes (the Standard Webhooks form; the key is those bytes). Never returned.',
);

const EndpointUrl = z
  .string()
  .min(1)
  .max(2048)
  .describe(
    'https URL on a public address. Loopback, private, link-local, unique-local, metadata and unspecified addresses ' +
      'are refused, as literals in any notation or as names resolving to them, now and at every delivery.',
  )
  .meta({ format: 'uri' });

const BatchSizeMax = z
  .int()
  .min(1)
  .max(BATCH_SIZE_MAX_LIMIT)
  .describe(`The most events one delivery carries, 1 to ${BATCH_SIZE_MAX_LIMIT}`);

const AffiliateId = z.string().min(1).max(255).nullable().describe('The affiliate this endpoint belongs to, stored as given');

export const WebhookCreateSchema = z.object({
  endpoint_url: EndpointUrl,
  secret: Secret,
  is_active: z.boolean().default(true),
  batch_size_max: BatchSizeMax.default(BATCH_SIZE_MAX_DEFAULT),
  affiliate_id: AffiliateId.optional(),
  events: EventTypeList.nullable().optional(),
});
export type WebhookCreate = z.output<typeof WebhookCreateSchema>;

/** Endpoint 17: only the fields sent change. */
export const WebhookPatchSchema = z.object({
  endpoint_url: EndpointUrl.optional(),
  secret: Secret.optional(),
  is_active: z.boolean().optional(),
  batch_size_max: BatchSizeMax.optional(),
  affiliate_id: AffiliateId.optional(),
  events: EventTypeList.nullable().optional(),
});
export type WebhookPatch = z.output<typeof WebhookPatchSchema>;

export const WebhookSchema = z.object({
  id: z.uuid(),
  endpoint_url: z.string().meta({ format: 'uri' }),
  is_active: z.boolean(),
  batch_size_max: z.int(),
  affiliate_id: z.string().nullable(),
  events: z.array(z.string()).nullable().describe('Subscribed event types; null: every type'),
  disabled_reason: z
    .string()
    .nullable()
    .describe('Why the service turned the webhook off (410 Gone, or every attempt failing for 5 days); null otherwise'),
  previous_secret_expires_at: z.iso
    .datetime()
    .nullable()
    .describe(
      'After a secret rotation: until when deliveries are signed with the replaced secret too (24 hours); null otherwise',
    ),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type WebhookView = z.output<typeof WebhookSchema>;

export function webhookView(w: Webhook): WebhookView {
  return {
    id: w.id,
    endpoint_url: w.endpointUrl,
    is_active: w.isActive,
    batch_size_max: w.batchSizeMax,
    affiliate_id: w.affiliateId ?? null,
    events: w.events ?? null,
    disabled_reason: w.disabledReason ?? null,
    previous_secret_expires_at: previousSecretValidUntil(w)?.toISOString() ?? null,
    created_at: w.createdAt.toISOString(),
    updated_at: w.updatedAt.toISOString(),
  };
}

export interface WebhookDeps {
  secrets: SecretBox;
  allowPrivate: boolean;
  /** DNS, replaceable in tests. */
  lookup?: Lookup;
}

async function checkUrl(url: string, deps: WebhookDeps): Promise<void> {
  try {
    await checkEndpoint(url, deps.allowPrivate, deps.lookup);
  } catch (err) {
    if (err instanceof EndpointRefused) throw fieldError('body', ['endpoint_url'], err.message, err.type);
    throw err;
  }
}

const unique = (types: readonly string[] | null | undefined) => (types ? [...new Set(types)] : null);

export async function createWebhook(
  em: EntityManager,
  actor: StaffCaller,
  deps: WebhookDeps,
  input: WebhookCreate,
): Promise<Webhook> {
  await checkUrl(input.endpoint_url, deps);
  return em.transactional(async (tx) => {
    const webhook = tx.create(Webhook, {
      endpointUrl: input.endpoint_url,
      secretSealed: deps.secrets.seal(input.secret),
      isActive: input.is_active,
      batchSizeMax: input.batch_size_max,
      affiliateId: input.affiliate_id ?? null,
      events: unique(input.events),
    });
    recordAudit(tx, actor, {
      action: 'webhook.created',
      entityType: 'webhook',
      entityId: webhook.id,
      after: webhookView(webhook),
    });
    return webhook;
  });
}

/** The webhook or 404; `lock` takes its row for the rest of the transaction. */
export async function findWebhook(em: EntityManager, id: string, lock = false): Promise<Webhook> {
  const webhook = await em.findOne(Webhook, id, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  if (!webhook) throw errors.notFound('Webhook');
  return webhook;
}

export async function updateWebhook(
  em: EntityManager,
  actor: StaffCaller,
  deps: WebhookDeps,
  id: string,
  patch: WebhookPatch,
): Promise<Webhook> {
  if (patch.endpoint_url !== undefined) await checkUrl(patch.endpoint_url, deps);
  return em.transactional(async (tx) => {
    const webhook = await findWebhook(tx, id, true);
    const before = webhookView(webhook);
    if (patch.endpoint_url !== undefined) webhook.endpointUrl = patch.endpoint_url;
    if (patch.secret !== undefined) await rotateSecret(tx, webhook, deps.secrets, patch.secret);
    if (patch.batch_size_max !== undefined) webhook.batchSizeMax = patch.batch_size_max;
    if (patch.affiliate_id !== undefined) webhook.affiliateId = patch.affiliate_id;
    if (patch.events !== undefined) webhook.events = unique(patch.events);
    if (patch.is_active !== undefined) {
      // Turning it on again starts afresh: no reason, no failure streak. What it was owed when
      // turned off goes out; what was written while it was off is not for it.
      if (patch.is_active && !webhook.isActive) {
        webhook.disabledReason = null;
        webhook.failingSince = null;
        await holdRelay(tx);
        await executeNamed(tx, RESUME_WEBHOOK.bind({ webhook_id: id }));
      } else if (!patch.is_active && webhook.isActive) {
        await executeNamed(tx, PAUSE_WEBHOOK.bind({ webhook_id: id }));
      }
      webhook.isActive = patch.is_active;
    }
    webhook.updatedAt = new Date();
    // The audit row says that the secret changed, never what to.
    const after = { ...webhookView(webhook), ...(patch.secret !== undefined ? { secret_changed: true } : {}) };
    recordAudit(tx, actor, { action: 'webhook.updated', entityType: 'webhook', entityId: id, before, after });
    return webhook;
  });
}

/**
 * A new secret signs from now on; the one it replaces keeps signing beside it for 24 hours, so a
 * receiver can move to the new one without refusing a delivery (the Standard Webhooks rotation
 * form: both signatures, space-separated, in `webhook-signature`).
 */
async function rotateSecret(tx: EntityManager, webhook: Webhook, secrets: SecretBox, secret: string): Promise<void> {
  await tx.populate(webhook, ['secretSealed']);
  rotateSealedSecret(webhook, secrets, secret);
}

export const WebhookSecretRotateSchema = z.object({ secret: Secret });

/** POST /webhooks/{id}/rotate-secret: the new secret signs at once, the old one too for 24 hours. Audited. */
export async function rotateWebhookSecret(
  em: EntityManager,
  actor: StaffCaller,
  deps: WebhookDeps,
  id: string,
  secret: string,
): Promise<Webhook> {
  return em.transactional(async (tx) => {
    const webhook = await findWebhook(tx, id, true);
    await rotateSecret(tx, webhook, deps.secrets, secret);
    webhook.updatedAt = new Date();
    recordAudit(tx, actor, {
      action: 'webhook.secret_rotated',
      entityType: 'webhook',
      entityId: id,
      after: { previous_secret_expires_at: webhook.previousSecretExpiresAt?.toISOString() ?? null },
    });
    return webhook;
  });
}

export async function deleteWebhook(em: EntityManager, actor: StaffCaller, id: string): Promise<void> {
  await em.transactional(async (tx) => {
    const webhook = await findWebhook(tx, id, true);
    recordAudit(tx, actor, { action: 'webhook.deleted', entityType: 'webhook', entityId: id, before: webhookView(webhook) });
    // Its deliveries and attempts go with it (foreign keys on delete cascade).
    tx.remove(webhook);
  });
}

export const WebhookTestResultSchema = z.object({
  event_id: z.uuid().describe('The id of the webhook.test event, as the delivery will carry it'),
  detail: z.string(),
});

/** Queues a `webhook.test` event through the outbox, delivered to this webhook only. */
export async function queueTestEvent(em: EntityManager, id: string): Promise<z.output<typeof WebhookTestResultSchema>> {
  return em.transactional(async (tx) => {
    const webhook = await findWebhook(tx, id);
    if (!webhook.isActive) throw errors.conflict('WEBHOOK_INACTIVE', 'The webhook is not active; turn it on first');
    const event = recordEvent(tx, {
      type: 'webhook.test',
      aggregateType: 'webhook',
      aggregateId: webhook.id,
      data: { webhook_id: webhook.id, message: 'A test event sent from the back office' },
    });
    return { event_id: event.id, detail: 'A webhook.test event is queued for this webhook' };
  });
}
