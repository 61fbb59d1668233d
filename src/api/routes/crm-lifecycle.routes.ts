import type { Request } from 'express';
import { z } from 'zod';
import { seesPii } from '../../platform/pii';
import { CustomerSchema, customerView, PersonName } from '../../domain/customers/customers';
import { closeCustomer } from '../../domain/crm/close-customer';
import { Country, createLead, InviteSentSchema, inviteLead, NewLeadSchema, Phone } from '../../domain/crm/leads';
import { addNote, deleteNote, editNote, listNotes, NoteBody, NoteSchema } from '../../domain/crm/notes';
import {
  confirmRegistration,
  register,
  REGISTRATION_ACCEPTED,
  REGISTRATION_TOKEN_TTL_HOURS,
  RegistrationAcceptedSchema,
} from '../../domain/crm/registration';
import {
  listSalesStatuses,
  replaceSalesStatuses,
  SalesStatusListSchema,
  SalesStatusSchema,
} from '../../domain/crm/sales-statuses';
import { customerTimeline, TIMELINE_KINDS, TimelineSchema } from '../../domain/crm/timeline';
import { TokenPairSchema, type ClientInfo } from '../../domain/identity/sessions';
import { AffiliateId } from '../../domain/customers/customers';
import { customerScopeOf } from '../../platform/customer-scope';
import { asStaff } from '../http/access';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { isoInstant } from '../http/timestamps';

/** Token answers must not be cached by any intermediary (RFC 6749, section 5.1). */
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

const DEVICE_ID = /^[\x21-\x7e]{1,200}$/;

function clientOf(req: Request): ClientInfo & { deviceId: string | null } {
  const device = req.get('x-device-id');
  return {
    ip: req.clientIp,
    userAgent: req.get('user-agent') ?? null,
    // An SDK fingerprint, kept as sent when it is printable and short; anything else is not recorded.
    deviceId: device && DEVICE_ID.test(device) ? device : null,
  };
}

const CustomerId = z.object({ customer_id: z.uuid() });
const NoteIds = z.object({ customer_id: z.uuid(), note_id: z.uuid() });

export const crmLifecycleRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/customers/register',
    operationId: 'registerCustomer',
    summary: 'Sign up (self-registration)',
    description:
      'Always 202 with the same body, for a new email and for one a customer already uses (no enumeration): a new ' +
      `email gets a \`registration_confirm\` mail whose link carries a single-use token valid ${REGISTRATION_TOKEN_TTL_HOURS} ` +
      'hours, for `POST /customers/register/confirm`; the owner of a taken email gets a `registration_attempt` mail ' +
      'instead. The password follows the policy of every password (422 at `password`). A country the broker refuses ' +
      '(`registration` settings) is 403 COUNTRY_NOT_ALLOWED. Every attempt from one client address counts against ' +
      '`registration.max_per_ip_per_hour` (default 5), refused ones included: past it, 429 RATE_LIMITED with ' +
      'Retry-After. `ref` (a partner code) and `promo_code` are stored with the customer for the partner and promo ' +
      'programmes, which apply them once they exist. An `X-Device-Id` header is recorded with the sign-up. The ' +
      '`signup` fraud rules run on every attempt (email, country, address, device): a block is 403 `FRAUD_BLOCKED`; ' +
      'a review lets the sign-up through, and its confirmation creates the customer with access `close_only` and a ' +
      'review case. During maintenance: 503 MAINTENANCE.',
    tags: ['registration'],
    access: { kind: 'public' },
    body: z.object({
      email: z.email().max(320),
      password: z.string().min(10).max(256),
      first_name: PersonName,
      last_name: PersonName,
      country: Country,
      phone: Phone.optional(),
      locale: z
        .string()
        .regex(/^[a-z]{2,3}(-[A-Z]{2})?$/)
        .optional()
        .describe('A language code such as en or de-AT'),
      ref: AffiliateId.optional().describe('A partner code'),
      promo_code: z.string().trim().min(1).max(64).optional(),
    }),
    responses: {
      202: { description: 'Accepted (whether or not the email is taken)', schema: RegistrationAcceptedSchema },
      403: { description: 'COUNTRY_NOT_ALLOWED, or FRAUD_BLOCKED' },
      429: { description: 'Too many sign-up attempts from this address' },
    },
    handler: async ({ body, em, services, req }) => {
      await register(
        em,
        {
          identity: services.identity,
          jobs: services.jobs,
          mailSecrets: services.mailSecrets,
          confirmUrl: services.config.registrationConfirmUrl,
        },
        body,
        clientOf(req),
      );
      return json(202, REGISTRATION_ACCEPTED);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/customers/register/confirm',
    operationId: 'confirmRegistration',
    summary: "Confirm a sign-up with its mail's token",
    description:
      'Creates the customer (lifecycle `registered`) and its wallet, and answers a token pair as a login does. A token ' +
      'that is unknown, expired or used is 422 at `token`; an email taken since the sign-up is 409 EMAIL_TAKEN.',
    tags: ['registration'],
    access: { kind: 'public' },
    body: z.object({ token: z.string().min(1).max(256) }),
    responses: {
      201: { description: 'The customer exists and is logged in', schema: TokenPairSchema },
      409: { description: 'EMAIL_TAKEN' },
    },
    handler: async ({ body, em, services, req }) => {
      const { pair } = await confirmRegistration(em, services.identity, body.token, clientOf(req));
      return json(201, pair, NO_STORE);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/customers/{customer_id}/close',
    operationId: 'closeCustomer',
    summary: 'Close a customer',
    description:
      'Lifecycle `closed`, for good: every session of the customer is revoked, and new accounts are refused (409 ' +
      'CUSTOMER_CLOSED); the customer may still log in and withdraw. Closing a closed customer changes nothing. Audited ' +
      '(`customer.closed`); event `customer.lifecycle_changed`.',
    tags: ['customers'],
    access: { kind: 'staff', permission: 'manage_customers' },
    params: CustomerId,
    body: z.object({ reason: z.string().trim().min(1).max(1000) }),
    responses: { 200: { description: 'The closed customer', schema: CustomerSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, body, em, services, caller }) =>
      json(
        200,
        customerView(
          await closeCustomer(em, services.identity, asStaff(caller), customerScopeOf(caller), params.customer_id, body.reason),
          { pii: seesPii(asStaff(caller).permissions) },
        ),
      ),
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/sales-statuses',
    operationId: 'listSalesStatuses',
    summary: 'The sales statuses, in their order',
    tags: ['customers'],
    access: { kind: 'staff', permission: 'view_customers' },
    responses: { 200: { description: 'The statuses', schema: z.object({ items: z.array(SalesStatusSchema) }) } },
    handler: async ({ em }) => json(200, { items: await listSalesStatuses(em) }),
  }),
  defineRoute({
    method: 'put',
    path: '/api/admin/sales-statuses',
    operationId: 'replaceSalesStatuses',
    summary: 'Replace the sales statuses',
    description:
      'The body is the whole list. A key left out that a customer still has is 409 SALES_STATUS_IN_USE (nothing ' +
      'changes); a key given twice is 422. Audited (`sales_statuses.updated`).',
    tags: ['customers'],
    access: { kind: 'staff', permission: 'manage_settings' },
    body: SalesStatusListSchema,
    responses: {
      200: { description: 'The statuses after the change', schema: z.object({ items: z.array(SalesStatusSchema) }) },
      409: { description: 'SALES_STATUS_IN_USE' },
    },
    handler: async ({ body, em, caller }) => json(200, { items: await replaceSalesStatuses(em, asStaff(caller), body) }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/leads',
    operationId: 'createLead',
    summary: 'Enter a lead',
    description:
      'A customer in lifecycle `lead`, with no password and no accounts; `POST /api/crm/leads/{id}/invite` lets it ' +
      'choose a password. A taken email is 409 EMAIL_TAKEN; a refused country 403 COUNTRY_NOT_ALLOWED. Audited (`lead.created`).',
    tags: ['registration'],
    access: { kind: 'staff', permission: 'manage_customers' },
    body: NewLeadSchema,
    responses: {
      201: { description: 'The lead', schema: CustomerSchema },
      403: { description: 'COUNTRY_NOT_ALLOWED' },
      409: { description: 'EMAIL_TAKEN' },
    },
    handler: async ({ body, em, caller }) =>
      json(201, customerView(await createLead(em, asStaff(caller), body), { pii: seesPii(asStaff(caller).permissions) })),
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/leads/{customer_id}/invite',
    operationId: 'inviteLead',
    summary: 'Invite a lead to choose a password',
    description:
      'Sends a `lead_invite` mail carrying a password-reset token (one hour, single use). Choosing the password with ' +
      'it (`POST /customers/password-reset/confirm`) makes the lead `registered`. A customer past `lead` is 409 ' +
      'NOT_A_LEAD. Audited (`lead.invited`).',
    tags: ['registration'],
    access: { kind: 'staff', permission: 'manage_customers' },
    params: CustomerId,
    responses: {
      202: { description: 'The mail is queued', schema: InviteSentSchema },
      404: { description: 'Not found' },
      409: { description: 'NOT_A_LEAD' },
    },
    handler: async ({ params, em, services, caller }) =>
      json(
        202,
        await inviteLead(
          em,
          { jobs: services.jobs, mailSecrets: services.mailSecrets, resetUrl: services.config.passwordResetUrl },
          asStaff(caller),
          customerScopeOf(caller),
          params.customer_id,
        ),
      ),
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/customers/{customer_id}/notes',
    operationId: 'addCustomerNote',
    summary: 'Write a note on a customer',
    description: 'Audited (`note.created`).',
    tags: ['customer notes'],
    access: { kind: 'staff', permission: 'view_customers' },
    params: CustomerId,
    body: z.object({ body: NoteBody, pinned: z.boolean().optional() }),
    responses: { 201: { description: 'The note', schema: NoteSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, body, em, caller }) =>
      json(201, await addNote(em, asStaff(caller), customerScopeOf(caller), params.customer_id, body)),
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/customers/{customer_id}/notes',
    operationId: 'listCustomerNotes',
    summary: "A customer's notes, pinned first, then newest first",
    tags: ['customer notes'],
    access: { kind: 'staff', permission: 'view_customers' },
    params: CustomerId,
    responses: {
      200: { description: 'The notes (deleted ones left out)', schema: z.object({ items: z.array(NoteSchema) }) },
      404: { description: 'Not found' },
    },
    handler: async ({ params, em, caller }) =>
      json(200, { items: await listNotes(em, customerScopeOf(caller), params.customer_id) }),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/crm/customers/{customer_id}/notes/{note_id}',
    operationId: 'editCustomerNote',
    summary: 'Edit a note (its author, within 24 hours)',
    description:
      'Only the author may edit a note (403 NOT_NOTE_AUTHOR), and only within 24 hours of writing it (409 NOTE_LOCKED). ' +
      'Audited (`note.updated`, before and after).',
    tags: ['customer notes'],
    access: { kind: 'staff', permission: 'view_customers' },
    params: NoteIds,
    body: z.object({ body: NoteBody.optional(), pinned: z.boolean().optional() }),
    responses: {
      200: { description: 'The note after the change', schema: NoteSchema },
      403: { description: 'NOT_NOTE_AUTHOR' },
      404: { description: 'Not found' },
      409: { description: 'NOTE_LOCKED' },
    },
    handler: async ({ params, body, em, caller }) =>
      json(200, await editNote(em, asStaff(caller), customerScopeOf(caller), params.customer_id, params.note_id, body)),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/crm/customers/{customer_id}/notes/{note_id}',
    operationId: 'deleteCustomerNote',
    summary: 'Delete a note (soft)',
    description: 'The note leaves the lists and the timeline; its row and its trail stay. Audited (`note.deleted`).',
    tags: ['customer notes'],
    access: { kind: 'staff', permission: 'manage_customers' },
    params: NoteIds,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'Not found' } },
    handler: async ({ params, em, caller }) => {
      await deleteNote(em, asStaff(caller), customerScopeOf(caller), params.customer_id, params.note_id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/customers/{customer_id}/timeline',
    operationId: 'customerTimeline',
    summary: "A customer's timeline, newest first",
    description:
      'Merged from what is already recorded, nothing written for it: the domain events about the customer (`event`, ' +
      'kept as long as the outbox keeps them), notes (`note`), tasks (`task`), conversation messages (`message`) ' +
      'and the audit entries whose subject is the customer (`staff_action`). `types` is a comma-separated list of ' +
      "those kinds (all by default); `before` pages: pass the previous answer's `next_before`.",
    tags: ['customers'],
    access: { kind: 'staff', permission: 'view_customers' },
    params: CustomerId,
    query: z.object({
      types: z
        .string()
        .max(200)
        .optional()
        .transform((t, ctx) => {
          if (t === undefined || t === '') return undefined;
          const kinds = t.split(',').map((k) => k.trim());
          const bad = kinds.find((k) => !(TIMELINE_KINDS as readonly string[]).includes(k));
          if (bad !== undefined) {
            ctx.addIssue({ code: 'custom', message: `Unknown kind "${bad.slice(0, 32)}": one of ${TIMELINE_KINDS.join(', ')}` });
            return z.NEVER;
          }
          return kinds as (typeof TIMELINE_KINDS)[number][];
        })
        .describe(`Comma-separated kinds: ${TIMELINE_KINDS.join(', ')}`),
      before: isoInstant().optional().describe('Only items strictly older than this'),
      limit: z.coerce.number().int().min(1).max(200).default(50),
    }),
    responses: { 200: { description: 'A page of the timeline', schema: TimelineSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, query, em, caller }) =>
      json(200, await customerTimeline(em, customerScopeOf(caller), params.customer_id, query)),
  }),
];
