import { z } from 'zod';
import { EVENT_TYPES } from '../events/event-types';

/**
 * The JSON a webhook receiver gets: the batch's events in write order. The body is built by
 * the `webhook_delivery_steps` function (src/db/functions) from the stored events; this schema
 * is what the OpenAPI document publishes under `webhooks` and what the tests check every
 * delivery against, so the SQL and the promise cannot drift apart unnoticed.
 */
export const WebhookEventSchema = z.strictObject({
  id: z.uuid().describe('The event id: the same event redelivered keeps it, so a receiver can skip what it has'),
  type: z.enum(EVENT_TYPES).describe('What happened; a subscription filters on it. New types are added, never renamed'),
  sequence: z
    .int()
    .min(1)
    .describe(
      'The place of the event in the order events were written, broker-wide (increasing, with gaps). A redelivered ' +
        'batch can arrive after newer events: order by it, and per account ignore an event older than one already applied',
    ),
  created_at: z.iso
    .datetime({ precision: 3 })
    .describe('When the change was committed, UTC with milliseconds (2026-11-26T09:30:00.123Z)'),
  data: z
    .record(z.string(), z.unknown())
    .describe("The public view of the event's aggregate, as the API answers it (an order, a transfer, a customer…)"),
});

export const WebhookBodySchema = z
  .strictObject({
    events: z.array(WebhookEventSchema).min(1).describe("One or more events, oldest first, at most the webhook's batch_size_max"),
  })
  .describe('A batch of domain events');

export type WebhookBody = z.infer<typeof WebhookBodySchema>;
export type WebhookEvent = z.infer<typeof WebhookEventSchema>;
