import { customerScopeOf, ownerInScopeOr404 } from '../../platform/customer-scope';
import { z } from 'zod';
import { Account } from '../../entities/account.entity';
import { Integration } from '../../entities/integration.entity';
import { CallbackAnswerSchema, receivePaymentCallback, type CallbackDeps } from '../../domain/payments/callbacks';
import { PaymentCallbackSchema } from '../../domain/payments/adapters';
import {
  cancelOwnDeposit,
  createDepositIntent,
  DepositIntentCreateSchema,
  DepositIntentSchema,
  listOwnDeposits,
  ownDepositIntent,
  StaffDepositSchema,
} from '../../domain/payments/deposit-intents';
import {
  approveDeposit,
  DepositQueueQuery,
  listDeposits,
  rejectDeposit,
  staffDeposit,
} from '../../domain/payments/deposit-review';
import {
  createProvider,
  deleteIntegration,
  findIntegration,
  PaymentMethodSchema,
  paymentMethods,
  updateProvider,
} from '../../domain/payments/integrations';
import { ProviderCreateSchema, ProviderPatchSchema, ProviderSchema, providerView } from '../../domain/payments/integration-views';
import { SimulatedCallbackSchema, SimulatedPaymentSchema, sendSimulatedCallback } from '../../domain/payments/simulator-psp';
import type { AppServices } from '../../app-services';
import { asCustomer, asStaff } from '../http/access';
import { MoneyAmount } from '../http/amounts';
import { pageQuery, pageSchema } from '../http/paging';
import { isoInstant } from '../http/timestamps';
import { NoFields } from '../http/strict-body';
import { defineRoute, json, type RouteSpec } from '../http/route';

const ProviderId = z.object({ provider_id: z.uuid() });
const DepositId = z.object({ deposit_id: z.uuid() });

/** What a callback needs besides the request: the secrets' box, quotes for conversion, and the log of ignored reports. */
export function callbackDeps(services: AppServices): CallbackDeps {
  return {
    box: services.integrationSecrets,
    quotes: services.quotes,
    onIgnored: (effect, report) =>
      services.logger.warn(
        { intent_id: effect.intent.id, from: effect.from, to: effect.to, external_id: report.external_id },
        'deposit transition ignored: not allowed from its current state',
      ),
  };
}

const PROVIDER_EXAMPLE = {
  name: 'Acme Pay',
  kind: 'psp',
  adapter: 'generic_hmac',
  currencies: ['USD', 'EUR'],
  min_amount: 10,
  max_amount: 10000,
  fee: { type: 'percent', value: 1.5, borne_by: 'broker' },
  callback_secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  allowed_ips: ['203.0.113.0/24'],
  enabled: true,
};

export const paymentRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/admin/payment-providers',
    operationId: 'createPaymentProvider',
    summary: 'Add a payment provider',
    description:
      'A provider takes deposits in `currencies`, between `min_amount` and `max_amount` (in the currency paid). ' +
      '`callback_secret` is write-only and sealed at rest: its callbacks must carry a Standard Webhooks signature made ' +
      'with it (`webhook-id`, `webhook-timestamp`, `webhook-signature`), and, when `allowed_ips` is set, come from one ' +
      'of those addresses. It is listed in the integrations registry as kind `psp` with the same id. Audited.',
    tags: ['payments'],
    access: { kind: 'staff', permission: 'manage_payments' },
    body: ProviderCreateSchema.meta({ examples: [PROVIDER_EXAMPLE] }),
    responses: { 201: { description: 'Created', schema: ProviderSchema } },
    handler: async ({ body, em, caller, services }) =>
      json(201, providerView(await createProvider(em, asStaff(caller), services.integrationSecrets, body))),
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/payment-providers',
    operationId: 'listPaymentProviders',
    summary: 'Payment providers, oldest first',
    tags: ['payments'],
    access: { kind: 'staff', permission: 'manage_payments' },
    responses: { 200: { description: 'Every provider', schema: z.object({ items: z.array(ProviderSchema) }) } },
    handler: async ({ em }) =>
      json(200, {
        items: (await em.find(Integration, { kind: 'psp' }, { orderBy: { createdAt: 'asc', id: 'asc' } })).map(providerView),
      }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/payment-providers/{provider_id}',
    operationId: 'getPaymentProvider',
    summary: 'One payment provider',
    tags: ['payments'],
    access: { kind: 'staff', permission: 'manage_payments' },
    params: ProviderId,
    responses: { 200: { description: 'The provider', schema: ProviderSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em }) => json(200, providerView(await findIntegration(em, params.provider_id, 'psp'))),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/admin/payment-providers/{provider_id}',
    operationId: 'updatePaymentProvider',
    summary: 'Change a payment provider',
    description:
      'Only the fields sent change, with the rules of creation. A new `callback_secret` is a rotation: callbacks signed ' +
      'with the replaced one are still accepted for 24 hours (`previous_secret_expires_at`). Audited (a new secret shows ' +
      'as `secret_changed`, never its value).',
    tags: ['payments'],
    access: { kind: 'staff', permission: 'manage_payments' },
    params: ProviderId,
    body: ProviderPatchSchema,
    responses: {
      200: { description: 'The provider after the change', schema: ProviderSchema },
      404: { description: 'Not found' },
    },
    handler: async ({ params, body, em, caller, services }) =>
      json(200, providerView(await updateProvider(em, asStaff(caller), services.integrationSecrets, params.provider_id, body))),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/admin/payment-providers/{provider_id}',
    operationId: 'deletePaymentProvider',
    summary: 'Delete a payment provider no deposit names',
    description: 'A provider that deposits name is kept for their record: 409 `PROVIDER_IN_USE` (disable it instead). Audited.',
    tags: ['payments'],
    access: { kind: 'staff', permission: 'manage_payments' },
    params: ProviderId,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'Not found' }, 409: { description: 'PROVIDER_IN_USE' } },
    handler: async ({ params, em, caller }) => {
      await deleteIntegration(em, asStaff(caller), params.provider_id, 'psp');
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/payment-methods',
    operationId: 'listMyPaymentMethods',
    summary: 'The providers you can deposit with',
    description:
      'Every enabled provider that takes at least one currency of your accounts, with those currencies and its bounds.',
    tags: ['payments'],
    access: { kind: 'customer' },
    responses: { 200: { description: 'Payment methods', schema: z.object({ items: z.array(PaymentMethodSchema) }) } },
    handler: async ({ em, caller }) => {
      const accounts = await em.find(Account, { customer: asCustomer(caller).customerId }, { fields: ['currency'] });
      return json(200, { items: await paymentMethods(em, [...new Set(accounts.map((a) => a.currency))]) });
    },
  }),
  defineRoute({
    method: 'post',
    path: '/customers/me/deposits',
    operationId: 'createDepositIntent',
    summary: 'Start a deposit through a payment provider',
    description:
      'Creates a `pending` intent valid 30 minutes (`expires_at`). The money goes to your wallet, or to `login` when it ' +
      'names one of your live accounts (another login is 404); a different currency is converted on arrival as a transfer ' +
      "converts. The provider's `min_amount` and `max_amount`, and your verification level's `max_deposit_per_day`, " +
      'are 422 at `amount`; a currency the provider does not take is 422 at `currency`. Pay on `redirect_url` when there ' +
      'is one; the provider then tells us the outcome and the account is credited once. Unknown fields are refused ' +
      '(422 `extra_forbidden`). Accepts an Idempotency-Key header: the same key and body within 24 hours replays the ' +
      'first answer; another body is 422; while the first is in flight, 409.',
    tags: ['payments'],
    idempotent: true,
    access: { kind: 'customer' },
    body: DepositIntentCreateSchema.extend({ amount: MoneyAmount }).meta({
      examples: [{ provider_id: '0b5f8e1e-6f3c-4f5e-9d43-2a8f7b7f2c11', amount: 250, currency: 'USD' }],
    }),
    responses: { 201: { description: 'The intent, pending', schema: DepositIntentSchema, example: { status: 'pending' } } },
    handler: async ({ body, em, caller }) => json(201, await createDepositIntent(em, asCustomer(caller).customerId, body)),
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/deposits',
    operationId: 'listMyDeposits',
    summary: 'Your deposits through payment providers, newest first',
    tags: ['payments'],
    access: { kind: 'customer' },
    query: z.object(pageQuery()),
    responses: { 200: { description: 'A page of deposits', schema: pageSchema(DepositIntentSchema) } },
    handler: async ({ query, em, caller }) => json(200, await listOwnDeposits(em, asCustomer(caller).customerId, query)),
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/deposits/{deposit_id}',
    operationId: 'getMyDeposit',
    summary: 'One of your deposits, as it stands',
    tags: ['payments'],
    access: { kind: 'customer' },
    params: DepositId,
    responses: { 200: { description: 'The deposit', schema: DepositIntentSchema }, 404: { description: 'Not yours or none' } },
    handler: async ({ params, em, caller }) =>
      json(200, await ownDepositIntent(em, asCustomer(caller).customerId, params.deposit_id)),
  }),
  defineRoute({
    method: 'post',
    path: '/customers/me/deposits/{deposit_id}/cancel',
    operationId: 'cancelMyDeposit',
    summary: 'Give up a deposit you have not paid',
    description:
      'A `pending` or `processing` deposit becomes `cancelled`; any other is 409 `DEPOSIT_NOT_PENDING`. A payment the ' +
      'provider reports for it afterwards is not credited: contact support to have it refunded.',
    tags: ['payments'],
    idempotent: true,
    access: { kind: 'customer' },
    params: DepositId,
    body: NoFields,
    responses: {
      200: { description: 'The deposit, cancelled', schema: DepositIntentSchema, example: { status: 'cancelled' } },
      404: { description: 'Not yours or none' },
      409: { description: 'DEPOSIT_NOT_PENDING' },
    },
    handler: async ({ params, em, caller }) =>
      json(200, await cancelOwnDeposit(em, asCustomer(caller).customerId, params.deposit_id)),
  }),
  defineRoute({
    method: 'post',
    path: '/api/integrations/payments/{provider_id}/callbacks',
    operationId: 'receivePaymentCallback',
    summary: "A payment provider's callback",
    description:
      'No bearer token: the call is authenticated by its Standard Webhooks signature (`webhook-id`, `webhook-timestamp`, ' +
      '`webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">`) made with the provider\'s ' +
      '`callback_secret` (or, for 24 hours after a change, the replaced one), a timestamp at most 5 minutes from now, ' +
      'and, when the provider has `allowed_ips`, a source address among them. Anything else is 401 `SIGNATURE_INVALID`, ' +
      'and the attempt is logged (`rejected`) all the same.\n\n' +
      'Every call is recorded in the inbound log keyed by `(external_id, status)`: the same report again answers 200 ' +
      '`duplicate` and changes nothing. `completed` credits the intent once, in the transaction that completes it; an ' +
      "amount or currency other than the intent's puts it in `review` for staff. `charged_back` and `refunded` take a " +
      "completed deposit back (even below zero). A report the intent's state does not allow (a late `failed` after " +
      '`completed`) is ignored, logged, and answered 200.',
    tags: ['payments'],
    access: { kind: 'public' },
    params: ProviderId,
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: z.toJSONSchema(PaymentCallbackSchema, { io: 'input' }),
          example: {
            external_id: 'pay_9f2c1a',
            intent_id: '6e1c2b7a-3f4d-4b8e-9a51-0c2d3e4f5a6b',
            status: 'completed',
            amount: '250.00',
            currency: 'USD',
          },
        },
      },
    },
    responses: {
      200: { description: 'Taken (`processed`) or already seen (`duplicate`)', schema: CallbackAnswerSchema },
      401: { description: 'SIGNATURE_INVALID' },
      404: { description: 'No such provider, or no such intent of it' },
      409: { description: 'PROVIDER_DISABLED' },
    },
    handler: async ({ params, em, services, req }) =>
      json(
        200,
        await receivePaymentCallback(em, callbackDeps(services), params.provider_id, {
          rawBody: req.rawBody,
          headers: req.headers,
          sourceIp: req.clientIp,
        }),
      ),
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/deposits',
    operationId: 'listDeposits',
    summary: 'Deposits through providers: the review queue',
    description: '`status=review` is the queue of payments whose amount or currency differs from their intent. Newest first.',
    tags: ['payments'],
    access: { kind: 'staff', permission: 'approve_deposits' },
    query: DepositQueueQuery.extend({
      from: isoInstant().optional().describe('Created at or after (ISO 8601)'),
      to: isoInstant().optional().describe('Created before (ISO 8601)'),
      ...pageQuery(),
    }),
    responses: { 200: { description: 'A page of deposits', schema: pageSchema(StaffDepositSchema) } },
    handler: async ({ query, em, caller }) => json(200, await listDeposits(em, query, query, customerScopeOf(caller))),
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/deposits/{deposit_id}',
    operationId: 'getDeposit',
    summary: 'One deposit through a provider',
    tags: ['payments'],
    access: { kind: 'staff', permission: 'approve_deposits' },
    params: DepositId,
    responses: { 200: { description: 'The deposit', schema: StaffDepositSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em, caller }) => {
      await ownerInScopeOr404(em, customerScopeOf(caller), 'deposit_intents', params.deposit_id, 'Deposit');
      return json(200, await staffDeposit(em, params.deposit_id));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/backoffice/deposits/{deposit_id}/approve',
    operationId: 'approveDeposit',
    summary: 'Credit a deposit held in review',
    description:
      'Credits what the provider reported received (or `amount`, in the received currency), converted into the ' +
      "account's currency as a transfer converts; the deposit becomes `completed`. Only a deposit in `review` (409 " +
      '`DEPOSIT_NOT_IN_REVIEW` otherwise). Audited. Accepts an Idempotency-Key header, as every money request does.',
    tags: ['payments'],
    idempotent: true,
    access: { kind: 'staff', permission: 'approve_deposits' },
    params: DepositId,
    body: z.strictObject({ amount: MoneyAmount.optional() }).optional(),
    responses: {
      200: { description: 'The deposit, completed', schema: StaffDepositSchema, example: { status: 'completed' } },
      404: { description: 'Not found' },
      409: { description: 'DEPOSIT_NOT_IN_REVIEW' },
    },
    handler: async ({ params, body, em, caller, services }) => {
      await ownerInScopeOr404(em, customerScopeOf(caller), 'deposit_intents', params.deposit_id, 'Deposit');
      return json(200, await approveDeposit(em, services.quotes, asStaff(caller), params.deposit_id, body?.amount));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/backoffice/deposits/{deposit_id}/reject',
    operationId: 'rejectDeposit',
    summary: 'Refuse a deposit held in review',
    description:
      'The deposit becomes `failed` with the reason; nothing is credited. Only a deposit in `review` (409 ' +
      '`DEPOSIT_NOT_IN_REVIEW` otherwise). Audited. Accepts an Idempotency-Key header.',
    tags: ['payments'],
    idempotent: true,
    access: { kind: 'staff', permission: 'approve_deposits' },
    params: DepositId,
    body: z.strictObject({ reason: z.string().trim().min(1).max(500) }),
    responses: {
      200: { description: 'The deposit, failed', schema: StaffDepositSchema, example: { status: 'failed' } },
      404: { description: 'Not found' },
      409: { description: 'DEPOSIT_NOT_IN_REVIEW' },
    },
    handler: async ({ params, body, em, caller }) => {
      await ownerInScopeOr404(em, customerScopeOf(caller), 'deposit_intents', params.deposit_id, 'Deposit');
      return json(200, await rejectDeposit(em, asStaff(caller), params.deposit_id, body.reason));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/simulator/payments/{intent_id}',
    operationId: 'simulatePayment',
    summary: 'Make the simulator provider call back for an intent',
    description:
      'Sends what a provider sends once the customer has paid: a real Standard Webhooks-signed HTTP callback to this ' +
      "service's public callback route, with `external_id` `sim-<intent id>`, so the whole path runs (signature, " +
      'inbound log, deduplication, crediting). Sending the same outcome again is a duplicate (200, nothing changes). ' +
      "Only for intents of a provider with adapter `simulator` (409 `NOT_SIMULATED`). The answer carries the callback's.",
    tags: ['payments', 'simulator'],
    access: { kind: 'staff', permission: 'manage_simulator' },
    params: z.object({ intent_id: z.uuid() }),
    body: SimulatedPaymentSchema.meta({ examples: [{ outcome: 'completed' }] }),
    responses: {
      200: { description: 'What the callback route answered', schema: SimulatedCallbackSchema },
      404: { description: 'No such intent' },
      409: { description: 'NOT_SIMULATED' },
    },
    handler: async ({ params, body, em, services, req }) => {
      const host = ['0.0.0.0', '::', ''].includes(services.config.host) ? '127.0.0.1' : services.config.host;
      const base = `http://${host.includes(':') ? `[${host}]` : host}:${req.socket.localPort}`;
      return json(200, await sendSimulatedCallback(em, services.integrationSecrets, base, params.intent_id, body));
    },
  }),
];
