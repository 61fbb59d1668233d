import { z } from 'zod';
import { EVENT_TYPES } from '../../domain/events/event-types';
import { WebhookBodySchema } from '../../domain/webhooks/webhook-body';

/**
 * The request the service sends to a webhook's endpoint_url, as an OpenAPI 3.1 `webhooks`
 * entry: what an integrator implements. The body schema is the one the tests check every
 * delivery against.
 */
const header = (name: string, description: string, example: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
  example,
});

export function webhooksDocument(): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(WebhookBodySchema, {
    io: 'output',
    unrepresentable: 'any',
    target: 'draft-2020-12',
  }) as Record<string, unknown>;
  return {
    events: {
      post: {
        operationId: 'receiveWebhookEvents',
        summary: 'A batch of events, sent to your endpoint_url',
        description:
          'Sent by the service to each active webhook whose `events` include the types of the batch (all types when ' +
          '`events` is null), in write order, one request in flight per webhook. Verify the signature (Standard Webhooks) ' +
          'before trusting the body. A 2xx answer delivers the batch; anything else is retried with exponential backoff ' +
          'and jitter for about a day, honouring `Retry-After`; a retried batch keeps its `webhook-id`. Redirects are not ' +
          'followed. 410 Gone disables the webhook.\n\nEvent types: ' +
          EVENT_TYPES.map((t) => `\`${t}\``).join(', ') +
          ". Each event's `data` is the public view of its aggregate as the API answers it; `customer.verified` " +
          'carries `{"customer_id", "verification_level", "previous_level", "source" ("documents" or "staff")}`. ' +
          'The data of `prop.challenge_failed` and `prop.challenge_passed` is the challenge stage ' +
          '(`#/components/schemas/PropChallenge`); `prop.challenge_passed` adds `next_challenge_id`, `next_login` and ' +
          '`next_status`, the stage it started.',
        tags: ['webhooks'],
        security: [],
        parameters: [
          header('webhook-id', 'The delivery id; the same on every retry of the batch', '2b8f3c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e'),
          header('webhook-timestamp', 'Seconds since the epoch when this attempt was signed', '1795685400'),
          header(
            'webhook-signature',
            'v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>">; two space-separated signatures while a rotated secret is still valid',
            'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
          ),
        ],
        requestBody: { required: true, content: { 'application/json': { schema } } },
        responses: {
          '2XX': { description: 'Received: the batch counts as delivered' },
          '410': { description: 'Gone: the service disables the webhook and sends it nothing more' },
          default: { description: 'Anything else: the batch is retried later' },
        },
      },
    },
  };
}
