import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Customer, LIFECYCLE_STAGES } from '../../entities/customer.entity';
import { SalesStatus } from '../../entities/sales-status.entity';
import { errors, fieldError } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { assertPasswordPolicy } from '../identity/password-policy';
import { hashPassword } from '../identity/passwords';
import { normalizeEmail } from '../identity/principals';
import { openWallet } from '../accounts/accounts';
import { recordEvent } from '../events/outbox';
import { flushUnique } from '../../db/flush-unique';
import { maskEmail, maskPhone } from '../../platform/pii';
import type { CustomerScope } from '../../platform/customer-scope';
import type { FilterQuery } from '@mikro-orm/core';
import { assignNewCustomer } from '../teams/assignment';

/**
 * Control characters (line breaks and tabs, NUL, DEL, C1), the Unicode line and paragraph
 * separators, and the bidirectional embeddings, overrides and isolates.
 */
const NOT_IN_A_NAME = /[\p{Cc}\u2028\u2029\u202A-\u202E\u2066-\u2069]/u;

/**
 * A customer's first or last name: one line of printable text, 1 to 100 characters after
 * trimming. A name goes into mail subjects and texts, where a line break would start a header
 * or a paragraph of the customer's making and an override would reverse the text after it;
 * refused (422 at the field) on every path that sets one. Markup is kept as typed: every place
 * that shows a name escapes it.
 */
export const PersonName = z
  .string()
  .refine((s) => !NOT_IN_A_NAME.test(s), { message: 'A name is one line of text, without control characters' })
  .trim()
  .min(1)
  .max(100);

export interface NewCustomer {
  email: string;
  password: string;
  first_name: string;
  last_name: string;
  locale?: string | undefined;
  country?: string | undefined;
  affiliate_id?: string | null | undefined;
}

/** An affiliate's reference as the broker's partner system knows it: stored and compared as given. */
export const AffiliateId = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .refine((s) => !NOT_IN_A_NAME.test(s), { message: 'One line of text, without control characters' })
  .describe("The affiliate the customer came through; webhooks with this affiliate_id receive the customer's events");

/** PATCH /api/crm/customers/{id}: only the fields sent change; `affiliate_id: null` clears it. */
export const CustomerPatchSchema = z.object({
  affiliate_id: AffiliateId.nullable().optional(),
  sales_status: z
    .string()
    .min(1)
    .max(64)
    .nullable()
    .optional()
    .describe('A key of the sales statuses (PUT /api/admin/sales-statuses); null clears it; an unknown key is 422'),
});

export const CustomerSchema = z.object({
  id: z.uuid(),
  email: z.string(),
  first_name: z.string(),
  last_name: z.string(),
  locale: z.string(),
  country: z.string().nullable(),
  affiliate_id: z.string().nullable().describe('The affiliate the customer came through; null when none'),
  is_active: z.boolean(),
  totp_enabled: z.boolean(),
  verification_level: z
    .int()
    .min(0)
    .max(3)
    .describe('0 (new customers) to 3: what the customer may do is the terms of this level (GET /api/admin/verification-levels)'),
  access: z
    .enum(['full', 'close_only', 'no_login'])
    .describe('What the customer may do (moderation): full, close_only or no_login'),
  lifecycle: z
    .enum(LIFECYCLE_STAGES)
    .describe('System-managed: lead, registered, verified, funded, active, dormant, closed (forward only)'),
  ftd_at: z.iso.datetime().nullable().describe('When the first deposit completed; null before it'),
  ftd_amount: z.string().nullable().describe('The first deposit, as decimal text; null before it'),
  sales_status: z.string().nullable().describe('A key of the sales statuses, set by staff; null when none'),
  phone: z.string().nullable(),
  lead_source: z.string().nullable(),
  lead_campaign: z.string().nullable(),
  partner_code: z.string().nullable().describe('The partner code the customer came with (sign-up `ref` or lead)'),
  partner_id: z.uuid().nullable().describe('The introducing broker the customer is attributed to; null when none'),
  promo_code: z.string().nullable().describe('The promo code given at sign-up'),
  closed_at: z.iso.datetime().nullable(),
  account_manager_id: z.uuid().nullable().describe('The staff user who manages the customer; null when none'),
  team_id: z.uuid().nullable().describe("The customer's team; null when none"),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type CustomerView = z.output<typeof CustomerSchema>;

/**
 * The customer as the API answers it. `pii: false` (staff without view_customer_pii) masks the
 * email and the phone: this is the one place they are masked, for answers and exports alike.
 * Events and audit rows keep the record whole.
 */
export function customerView(c: Customer, options: { pii?: boolean } = {}): CustomerView {
  return {
    id: c.id,
    email: options.pii === false ? maskEmail(c.email) : c.email,
    first_name: c.firstName,
    last_name: c.lastName,
    locale: c.locale,
    country: c.country ?? null,
    affiliate_id: c.affiliateId ?? null,
    is_active: c.isActive,
    totp_enabled: c.totpEnabled,
    verification_level: c.verificationLevel,
    access: c.access,
    lifecycle: c.lifecycle,
    ftd_at: c.ftdAt ? c.ftdAt.toISOString() : null,
    ftd_amount: c.ftdAmount ?? null,
    sales_status: c.salesStatus ?? null,
    phone: c.phone ? (options.pii === false ? maskPhone(c.phone) : c.phone) : null,
    lead_source: c.leadSource ?? null,
    lead_campaign: c.leadCampaign ?? null,
    partner_code: c.partnerCode ?? null,
    partner_id: c.partnerId ?? null,
    promo_code: c.promoCode ?? null,
    closed_at: c.closedAt ? c.closedAt.toISOString() : null,
    account_manager_id: c.accountManager?.id ?? null,
    team_id: c.team?.id ?? null,
    created_at: c.createdAt.toISOString(),
    updated_at: c.updatedAt.toISOString(),
  };
}

export async function createCustomer(em: EntityManager, actor: StaffCaller, input: NewCustomer): Promise<Customer> {
  assertPasswordPolicy(input.password, { email: input.email, names: [input.first_name, input.last_name] });
  const customer = em.create(Customer, {
    email: normalizeEmail(input.email),
    passwordHash: await hashPassword(input.password),
    firstName: input.first_name,
    lastName: input.last_name,
    locale: input.locale ?? 'en',
    country: input.country ?? null,
    affiliateId: input.affiliate_id ?? null,
  });
  // Every customer has a wallet from the start: deposits and withdrawals go through it.
  openWallet(em, customer);
  recordAudit(em, actor, {
    action: 'customer.created',
    entityType: 'customer',
    entityId: customer.id,
    after: customerView(customer),
  });
  recordEvent(em, {
    type: 'customer.created',
    aggregateType: 'customer',
    aggregateId: customer.id,
    customerId: customer.id,
    data: customerView(customer),
  });
  // After customer.created, so the feed tells of the customer before of its assignment.
  await assignNewCustomer(em, customer);
  await flushUnique(em, () => errors.conflict('EMAIL_TAKEN', 'A customer with this email exists'));
  return customer;
}

/** Changes the fields sent, audited with the customer before and after. */
export async function updateCustomer(
  em: EntityManager,
  actor: StaffCaller,
  id: string,
  patch: z.output<typeof CustomerPatchSchema>,
): Promise<Customer> {
  const customer = await em.findOne(Customer, id);
  if (!customer) throw errors.notFound('Customer');
  const before = customerView(customer);
  if (patch.affiliate_id !== undefined) customer.affiliateId = patch.affiliate_id;
  if (patch.sales_status !== undefined) {
    if (patch.sales_status !== null && !(await em.findOne(SalesStatus, { key: patch.sales_status })))
      throw fieldError('body', ['sales_status'], 'Not one of the sales statuses');
    customer.salesStatus = patch.sales_status;
  }
  customer.updatedAt = new Date();
  recordAudit(em, actor, {
    action: 'customer.updated',
    entityType: 'customer',
    entityId: customer.id,
    before,
    after: customerView(customer),
  });
  await em.flush();
  return customer;
}

/** The customers a scope sees, as an ORM filter: a limited staff scope reads the customer's own manager and team columns. */
export function customersInScope(scope: CustomerScope): FilterQuery<Customer> {
  if (scope.customerId !== null) return { id: scope.customerId };
  if (scope.staff === null) return {};
  return { $or: [{ accountManager: scope.staff.userId }, { team: { $in: [...scope.staff.teamIds] } }] };
}
