import { customerScopeOf } from '../../platform/customer-scope';
import { z } from 'zod';
import { Integration } from '../../entities/integration.entity';
import { reprocessInbound } from '../../domain/payments/callbacks';
import { InboundQuery, InboundSchema, listInbound } from '../../domain/payments/inbound-log';
import { createIntegration, deleteIntegration, findIntegration, updateIntegration } from '../../domain/payments/integrations';
import {
  IntegrationCreateSchema,
  IntegrationPatchSchema,
  IntegrationSchema,
  integrationView,
} from '../../domain/payments/integration-views';
import {
  KYC_ADAPTERS,
  KycCallbackAnswerSchema,
  KycCallbackSchema,
  receiveKycCallback,
} from '../../domain/payments/kyc-callbacks';
import { EventFeedQuery, EventFeedSchema, readEventFeed } from '../../domain/streams/event-feed';
import { asStaff } from '../http/access';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { callbackDeps } from './payments.routes';

const IntegrationId = z.object({ integration_id: z.uuid() });

export const integrationRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/admin/integrations',
    operationId: 'createIntegration',
    summary: 'Register an outside system',
    description:
      '`secrets` are write-only and sealed at rest. A `psp` is a payment provider: its `config` holds the provider ' +
      'terms (`currencies`, `min_amount`, `max_amount`, `fee`, `allowed_ips`) and its `secrets` a `callback_secret`, ' +
      'with the rules of `POST /api/admin/payment-providers`; it is listed there with the same id. Audited.',
    tags: ['integrations'],
    access: { kind: 'staff', permission: 'manage_integrations' },
    body: IntegrationCreateSchema.meta({
      examples: [
        {
          kind: 'psp',
          adapter: 'generic_hmac',
          name: 'Acme Pay',
          config: { currencies: ['USD'], min_amount: 10, max_amount: 5000 },
          secrets: { callback_secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
        },
      ],
    }),
    responses: { 201: { description: 'Registered', schema: IntegrationSchema } },
    handler: async ({ body, em, caller, services }) =>
      json(201, integrationView(await createIntegration(em, asStaff(caller), services.integrationSecrets, body))),
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/integrations',
    operationId: 'listIntegrations',
    summary: 'Every registered integration, payment providers included',
    tags: ['integrations'],
    access: { kind: 'staff', permission: 'manage_integrations' },
    query: z.object({ kind: IntegrationSchema.shape.kind.optional() }),
    responses: { 200: { description: 'Oldest first', schema: z.object({ items: z.array(IntegrationSchema) }) } },
    handler: async ({ query, em }) =>
      json(200, {
        items: (
          await em.find(Integration, query.kind ? { kind: query.kind } : {}, { orderBy: { createdAt: 'asc', id: 'asc' } })
        ).map(integrationView),
      }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/integrations/{integration_id}',
    operationId: 'getIntegration',
    summary: 'One integration, with its last inbound call and error',
    tags: ['integrations'],
    access: { kind: 'staff', permission: 'manage_integrations' },
    params: IntegrationId,
    responses: { 200: { description: 'The integration', schema: IntegrationSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em }) => json(200, integrationView(await findIntegration(em, params.integration_id))),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/admin/integrations/{integration_id}',
    operationId: 'updateIntegration',
    summary: 'Change an integration',
    description:
      'Only the fields sent change. New `secrets` replace the set, and the replaced set stays valid for 24 hours. ' +
      'A `config` sent is merged into the stored one. Audited (never a secret).',
    tags: ['integrations'],
    access: { kind: 'staff', permission: 'manage_integrations' },
    params: IntegrationId,
    body: IntegrationPatchSchema,
    responses: {
      200: { description: 'The integration after the change', schema: IntegrationSchema },
      404: { description: 'Not found' },
    },
    handler: async ({ params, body, em, caller, services }) =>
      json(
        200,
        integrationView(await updateIntegration(em, asStaff(caller), services.integrationSecrets, params.integration_id, body)),
      ),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/admin/integrations/{integration_id}',
    operationId: 'deleteIntegration',
    summary: 'Remove an integration and its inbound log',
    description: 'A payment provider that deposits name is kept: 409 `PROVIDER_IN_USE`. Audited.',
    tags: ['integrations'],
    access: { kind: 'staff', permission: 'manage_integrations' },
    params: IntegrationId,
    responses: { 204: { description: 'Removed' }, 404: { description: 'Not found' }, 409: { description: 'PROVIDER_IN_USE' } },
    handler: async ({ params, em, caller }) => {
      await deleteIntegration(em, asStaff(caller), params.integration_id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/integrations/{integration_id}/inbound',
    operationId: 'listIntegrationInbound',
    summary: 'Every call the integration made to us, newest first',
    description:
      'Each call with its source address, whether its signature verified, and its `outcome`: `processed`, `duplicate` ' +
      '(the same report again: nothing done), `rejected` (signature or address refused) or `failed` (it could not be ' +
      'applied: reprocess it once mended). Bodies are kept 30 days.',
    tags: ['integrations'],
    access: { kind: 'staff', permission: 'manage_integrations' },
    params: IntegrationId,
    query: InboundQuery.extend(pageQuery()),
    responses: { 200: { description: 'A page of calls', schema: pageSchema(InboundSchema) }, 404: { description: 'Not found' } },
    handler: async ({ params, query, em }) => json(200, await listInbound(em, params.integration_id, query.outcome, query)),
  }),
  defineRoute({
    method: 'post',
    path: '/api/admin/integrations/{integration_id}/inbound/{inbound_id}/reprocess',
    operationId: 'reprocessIntegrationInbound',
    summary: 'Run a failed inbound call again',
    description:
      'Applies the stored body as if it had just arrived (its signature was checked when it did). Idempotent: the ' +
      "report is taken once, so a reprocess after the provider's own retry succeeded records `duplicate`. Only a " +
      '`failed` call (409 `INBOUND_NOT_FAILED`). Audited.',
    tags: ['integrations'],
    access: { kind: 'staff', permission: 'manage_integrations' },
    params: IntegrationId.extend({ inbound_id: z.uuid() }),
    responses: {
      200: { description: 'The call after the run', schema: InboundSchema },
      404: { description: 'Not found' },
      409: { description: 'INBOUND_NOT_FAILED' },
    },
    handler: async ({ params, em, caller, services }) =>
      json(200, await reprocessInbound(em, callbackDeps(services), asStaff(caller), params.integration_id, params.inbound_id)),
  }),
  defineRoute({
    method: 'post',
    path: '/api/integrations/kyc/{integration_id}/callbacks',
    operationId: 'receiveKycCallback',
    summary: "A KYC provider's review of a customer",
    description:
      `For integrations of kind \`kyc\` (adapters ${KYC_ADAPTERS.map((a) => `\`${a}\``).join(', ')}, which read the same ` +
      "body, shaped like Sumsub's `applicantReviewed` webhook). No bearer token: the call is authenticated by its " +
      "Standard Webhooks signature (`webhook-id`, `webhook-timestamp`, `webhook-signature`) made with the integration's " +
      '`callback_secret` (or, for 24 hours after a change, the replaced one), with a timestamp at most 5 minutes from ' +
      'now, and, when its `config.allowed_ips` is set, a source address among them. Anything else is 401 ' +
      '`SIGNATURE_INVALID`, and the attempt is logged (`rejected`) all the same.\n\n' +
      '`reviewResult.reviewAnswer` `GREEN` approves, `RED` rejects (the reason is the `rejectLabels` and ' +
      '`moderationComment`), the documents named in `document_ids`, or without it every pending document of the ' +
      'customer `externalUserId`, exactly as the compliance desk would: the customer may rise a verification level. ' +
      'The audit names the actor `integration:<id>`. Every call is recorded in the inbound log keyed by ' +
      '`(external_id, reviewAnswer)`: the same review again answers 200 `duplicate` and changes nothing. Documents ' +
      'already decided are left as they are. An unknown customer or document is 404 and the call is logged `failed`, ' +
      'to be reprocessed once mended.',
    tags: ['integrations'],
    access: { kind: 'public' },
    params: IntegrationId,
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: z.toJSONSchema(KycCallbackSchema, { io: 'input' }),
          example: {
            type: 'applicantReviewed',
            external_id: 'rev_5f2a91',
            applicantId: '5cb56e8e0a975a35f333cb83',
            externalUserId: '6e1c2b7a-3f4d-4b8e-9a51-0c2d3e4f5a6b',
            reviewResult: {
              reviewAnswer: 'RED',
              rejectLabels: ['DOCUMENT_DAMAGED'],
              moderationComment: 'The scan is unreadable',
            },
          },
        },
      },
    },
    responses: {
      200: { description: 'Taken (`processed`) or already seen (`duplicate`)', schema: KycCallbackAnswerSchema },
      401: { description: 'SIGNATURE_INVALID' },
      404: { description: 'No such KYC integration, or no such customer or document' },
      409: { description: 'INTEGRATION_DISABLED' },
    },
    handler: async ({ params, em, services, req }) =>
      json(
        200,
        await receiveKycCallback(em, services.integrationSecrets, params.integration_id, {
          rawBody: req.rawBody,
          headers: req.headers,
          sourceIp: req.clientIp,
        }),
      ),
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/events',
    operationId: 'listEventFeed',
    summary: 'Pull domain events in order, for CRM sync',
    description:
      'The events streams and webhooks carry, with the same ids, in the order streams resume in (publication order: ' +
      'an event that committed late is never skipped by a reader resuming after a later one). Page with ' +
      '`after=<next_after>`. `after=now` answers an empty page whose `next_after` is the current end; an empty page ' +
      'answers the `after` it was given. Events are kept 30 days: an `after` older than that (or unknown) is 410 ' +
      '`CURSOR_EXPIRED`.',
    tags: ['integrations'],
    access: { kind: 'staff', permission: 'view_events' },
    query: EventFeedQuery,
    responses: { 200: { description: 'A page of events', schema: EventFeedSchema }, 410: { description: 'CURSOR_EXPIRED' } },
    handler: async ({ query, em, caller }) => json(200, await readEventFeed(em, query, customerScopeOf(caller).staff)),
  }),
];
