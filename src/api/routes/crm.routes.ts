import { attributeByStaff } from '../../domain/partners/partners';
import { z } from 'zod';
import {
  AffiliateId,
  createCustomer,
  CustomerPatchSchema,
  CustomerSchema,
  customersInScope,
  customerView,
  PersonName,
  updateCustomer,
} from '../../domain/customers/customers';
import {
  ApiTokenSchema,
  apiTokenView,
  IssuedApiTokenSchema,
  issuedApiTokenView,
  issueApiToken,
  revokeApiToken,
} from '../../domain/identity/api-tokens';
import { PERMISSIONS } from '../../domain/identity/permissions';
import { setCustomerLevel } from '../../domain/compliance/documents';
import { MAX_LEVEL } from '../../domain/compliance/verification-levels';
import { screenVerificationChange } from '../../domain/fraud/screens';
import { ApiToken } from '../../entities/api-token.entity';
import { Customer, CUSTOMER_ACCESS_LEVELS } from '../../entities/customer.entity';
import { Session } from '../../entities/session.entity';
import { setCustomerAccess } from '../../domain/fraud/moderation';
import { revokeSessions } from '../../domain/identity/sessions';
import { errors } from '../../platform/errors';
import { customerScopeOf } from '../../platform/customer-scope';
import { seesPii } from '../../platform/pii';
import { recordAudit } from '../../domain/audit/audit';
import { CUSTOMER_EXPORT_MAX_ROWS, writeCustomerCsv } from '../../domain/customers/customer-export';
import { asCustomer, asStaff } from '../http/access';
import { findPage } from '../../db/find-page';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';

export const crmRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/crm/customers',
    operationId: 'createCustomer',
    summary: 'Create a customer',
    tags: ['customers'],
    access: { kind: 'staff', permission: 'manage_customers' },
    body: z.object({
      email: z.email().max(320),
      password: z.string().min(10).max(256),
      first_name: PersonName,
      last_name: PersonName,
      locale: z
        .string()
        .regex(/^[a-z]{2,3}(-[A-Z]{2})?$/)
        .optional()
        .describe('A language code such as en or de-AT'),
      country: z
        .string()
        .regex(/^[A-Z]{2}$/)
        .optional()
        .describe('ISO 3166-1 alpha-2'),
      affiliate_id: AffiliateId.optional(),
    }),
    responses: { 201: { description: 'Created', schema: CustomerSchema }, 409: { description: 'EMAIL_TAKEN' } },
    handler: async ({ body, em, caller }) =>
      json(201, customerView(await createCustomer(em, asStaff(caller), body), { pii: seesPii(asStaff(caller).permissions) })),
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/customers',
    operationId: 'listCustomers',
    summary: 'List customers, newest first',
    tags: ['customers'],
    access: { kind: 'staff', permission: 'view_customers' },
    query: z.object({ email: z.string().max(320).optional().describe('Exact email, case-insensitive'), ...pageQuery() }),
    responses: { 200: { description: 'A page of customers', schema: pageSchema(CustomerSchema) } },
    handler: async ({ query, em, caller }) => {
      const staff = asStaff(caller);
      const where = {
        $and: [query.email ? { email: query.email.trim().toLowerCase() } : {}, customersInScope(customerScopeOf(staff))],
      };
      const pii = seesPii(staff.permissions);
      return json(
        200,
        await findPage(em, Customer, where, query, { orderBy: { createdAt: 'desc', id: 'desc' } }, (c) =>
          customerView(c, { pii }),
        ),
      );
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/customers/export',
    operationId: 'exportCustomers',
    summary: 'The customer list as a CSV file, within your scope',
    description:
      `The customers of \`GET /api/crm/customers\` (same filter, newest first, at most ${CUSTOMER_EXPORT_MAX_ROWS} rows) as ` +
      'RFC 4180 CSV with a header row of column keys; a text cell that a spreadsheet would read as a formula starts ' +
      "with `'`. Without `view_customer_pii` the email and phone are masked as in every answer (`j***@example.com`, " +
      '`+44******12`). Audited (`customers.exported`).',
    tags: ['customers'],
    access: { kind: 'staff', permission: 'view_customers' },
    query: z.object({ email: z.string().max(320).optional().describe('Exact email, case-insensitive') }),
    raw: true,
    responses: { 200: { description: 'The file, `text/csv; charset=utf-8`, as an attachment' } },
    handler: async ({ query, em, caller, res }) => {
      const staff = asStaff(caller);
      const pii = seesPii(staff.permissions);
      recordAudit(em, staff, {
        action: 'customers.exported',
        entityType: 'customer_export',
        after: { pii, email: query.email ?? null },
      });
      await em.flush();
      res.status(200);
      res.attachment('customers.csv');
      res.setHeader('Content-Type', 'text/csv; charset=utf-8');
      await writeCustomerCsv(
        em,
        customerScopeOf(staff),
        { pii, ...(query.email ? { filter: { email: query.email.trim().toLowerCase() } } : {}) },
        res,
      );
      return undefined;
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/customers/{customer_id}',
    operationId: 'getCustomer',
    summary: 'One customer',
    tags: ['customers'],
    access: { kind: 'staff', permission: 'view_customers' },
    params: z.object({ customer_id: z.uuid() }),
    responses: { 200: { description: 'The customer', schema: CustomerSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em, caller }) => {
      const staff = asStaff(caller);
      const customer = await em.findOne(Customer, {
        $and: [{ id: params.customer_id }, customersInScope(customerScopeOf(staff))],
      });
      if (!customer) throw errors.notFound('Customer');
      return json(200, customerView(customer, { pii: seesPii(staff.permissions) }));
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/api/crm/customers/{customer_id}',
    operationId: 'updateCustomer',
    summary: 'Change a customer (staff)',
    description:
      'Only the fields sent change; `affiliate_id: null` clears it. Audited (`customer.updated`, before and after). ' +
      '`partner_id` attributes the customer to an introducing broker (see the partners guide). ' +
      '`sales_status` sets one of the sales statuses (an unknown key is 422 at `sales_status`; null clears it). ' +
      "A webhook with an `affiliate_id` receives the events about this customer's accounts from the change on. " +
      '`verification_level` (0 to 3) sets what the customer may do, whatever its documents, and needs ' +
      '`manage_compliance` besides (403 otherwise); audited (`customer.verification_level_changed`), and a rise is a ' +
      '`customer.verified` event, as a rise by approved documents is. The change runs the `verification_change` fraud ' +
      'rules (the built-in one, disabled as shipped, opens a case when the staff user is not on the ' +
      "`verification_exceptions` list); a `review` opens or extends the customer's case and the change stands.",
    tags: ['customers'],
    access: { kind: 'staff', permission: 'manage_customers' },
    params: z.object({ customer_id: z.uuid() }),
    body: CustomerPatchSchema.extend({
      partner_id: z
        .uuid()
        .nullable()
        .optional()
        .describe(
          "Attributes the customer to this partner (null removes it); `affiliate_id` becomes the partner's code. After " +
            'the first deposit it needs `manage_partners` (403 otherwise) and a `reason` (422 without). Audited.',
        ),
      reason: z
        .string()
        .trim()
        .min(1)
        .max(500)
        .optional()
        .describe('Why the customer changes partner (needed after its first deposit)'),
      verification_level: z.int().min(0).max(MAX_LEVEL).optional().describe('0 to 3; needs manage_compliance'),
      access: z
        .enum(CUSTOMER_ACCESS_LEVELS)
        .optional()
        .describe(
          'Needs moderate_customers. `close_only`: no new orders, transfers or payouts (403 ACCESS_RESTRICTED), withdrawals ' +
            'still allowed; `no_login`: sessions revoked, logins answered as a wrong password. Audited, event `customer.access_changed`.',
        ),
    }),
    responses: {
      200: { description: 'The customer after the change', schema: CustomerSchema },
      404: { description: 'Not found' },
    },
    handler: async ({ params, body, em, caller, services }) => {
      const staff = asStaff(caller);
      const pii = seesPii(staff.permissions);
      if (!(await em.count(Customer, { $and: [{ id: params.customer_id }, customersInScope(customerScopeOf(staff))] })))
        throw errors.notFound('Customer');
      const { verification_level: level, access, partner_id: partnerId, reason, ...rest } = body;
      if (partnerId !== undefined) {
        const customer = await em.findOneOrFail(Customer, params.customer_id);
        await attributeByStaff(em, staff, customer, partnerId, reason);
        await em.flush();
      }
      if (access !== undefined) {
        if (!staff.permissions.has('moderate_customers'))
          throw errors.forbidden('Setting access needs the permission moderate_customers');
        if (await setCustomerAccess(em, staff, params.customer_id, access)) {
          const sessions = await em.find(
            Session,
            { principalType: 'customer', principalId: params.customer_id, revokedAt: null },
            { fields: ['id'] },
          );
          await revokeSessions(
            em,
            services.identity,
            sessions.map((s) => s.id),
            'access_no_login',
          );
        }
      }
      if (level !== undefined) {
        if (!staff.permissions.has('manage_compliance'))
          throw errors.forbidden('Setting verification_level needs the permission manage_compliance');
        await setCustomerLevel(em, staff, params.customer_id, level, (tx, change) =>
          screenVerificationChange(tx, staff, params.customer_id, change),
        );
      }
      if (
        (level === undefined && access === undefined && partnerId === undefined) ||
        rest.affiliate_id !== undefined ||
        rest.sales_status !== undefined
      )
        return json(200, customerView(await updateCustomer(em, staff, params.customer_id, rest), { pii }));
      const customer = await em.findOne(Customer, params.customer_id);
      if (!customer) throw errors.notFound('Customer');
      return json(200, customerView(customer, { pii }));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me',
    operationId: 'getMyCustomerProfile',
    summary: "The calling customer's profile, with its verification level",
    description: 'The same answer as `GET /api/customer/me`.',
    tags: ['customers'],
    access: { kind: 'customer' },
    responses: { 200: { description: 'The customer', schema: CustomerSchema } },
    handler: async ({ em, caller }) => json(200, customerView(await em.findOneOrFail(Customer, asCustomer(caller).customerId))),
  }),
  defineRoute({
    method: 'get',
    path: '/api/customer/me',
    operationId: 'getMyProfile',
    summary: "The calling customer's profile",
    tags: ['customers'],
    access: { kind: 'customer' },
    responses: { 200: { description: 'The customer', schema: CustomerSchema } },
    handler: async ({ em, caller }) => json(200, customerView(await em.findOneOrFail(Customer, asCustomer(caller).customerId))),
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/settings/api-tokens',
    operationId: 'createApiToken',
    summary: 'Issue an API token',
    description:
      'The token text is in this answer only; the server keeps a SHA-256 of it. Scopes must be permissions the issuer holds, and the token never grants more than its issuer still holds.',
    tags: ['api tokens'],
    access: { kind: 'staff', permission: 'manage_api_tokens' },
    body: z.object({
      name: z.string().trim().min(1).max(100),
      scopes: z.array(z.enum(PERMISSIONS)).min(1).max(PERMISSIONS.length),
      expires_in_days: z.int().min(1).max(3650).optional().describe('Without it the token does not expire'),
    }),
    responses: { 201: { description: 'Issued', schema: IssuedApiTokenSchema } },
    handler: async ({ body, em, caller }) => {
      const { token, text } = await issueApiToken(em, asStaff(caller), body);
      return json(201, issuedApiTokenView(token, text));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/settings/api-tokens',
    operationId: 'listApiTokens',
    summary: 'List API tokens (never their text)',
    tags: ['api tokens'],
    access: { kind: 'staff', permission: 'manage_api_tokens' },
    responses: { 200: { description: 'Tokens, newest first', schema: z.object({ items: z.array(ApiTokenSchema) }) } },
    handler: async ({ em }) =>
      json(200, { items: (await em.find(ApiToken, {}, { orderBy: { createdAt: 'desc' } })).map(apiTokenView) }),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/crm/settings/api-tokens/{token_id}',
    operationId: 'revokeApiToken',
    summary: 'Revoke an API token, at once',
    description: "Another user's token can be revoked only by a caller holding every permission that user holds (403).",
    tags: ['api tokens'],
    access: { kind: 'staff', permission: 'manage_api_tokens' },
    params: z.object({ token_id: z.uuid() }),
    responses: { 204: { description: 'Revoked' }, 404: { description: 'Not found' } },
    handler: async ({ params, em, services, caller }) => {
      await revokeApiToken(em, services.identity, asStaff(caller), params.token_id);
      return { status: 204 };
    },
  }),
];
