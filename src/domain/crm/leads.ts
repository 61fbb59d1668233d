import { resolveReferral } from '../identity/referrals';
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Customer } from '../../entities/customer.entity';
import { PasswordResetToken } from '../../entities/password-reset-token.entity';
import type { JobProducer } from '../../jobs/job-producer';
import { flushUnique } from '../../db/flush-unique';
import type { StaffCaller } from '../../platform/caller';
import { randomToken, sha256Hex } from '../../platform/crypto';
import { inScopeOr404, type CustomerScope } from '../../platform/customer-scope';
import { errors } from '../../platform/errors';
import type { SecretBox } from '../../platform/secret-box';
import { recordAudit } from '../audit/audit';
import { AffiliateId, customerView, PersonName } from '../customers/customers';
import { recordEvent } from '../events/outbox';
import { resetLink, RESET_TOKEN_TTL_SECONDS } from '../identity/password-reset';
import { hashPassword } from '../identity/passwords';
import { normalizeEmail } from '../identity/principals';
import { dispatchMail, queueMail } from '../mail/mail-outbox';
import { assertCountryAllowed, registrationSettings } from './registration-rules';
import { assignNewCustomer } from '../teams/assignment';

export const Country = z
  .string()
  .regex(/^[A-Z]{2}$/)
  .describe('ISO 3166-1 alpha-2');

export const Phone = z
  .string()
  .regex(/^\+?[0-9 ()-]{4,31}$/, { message: 'A phone number: digits, spaces, ( ) - and an optional leading +' })
  .describe('A phone number, international form preferred (+44 20 7946 0000)');

export const NewLeadSchema = z.object({
  email: z.email().max(320),
  first_name: PersonName,
  last_name: PersonName,
  phone: Phone.optional(),
  country: Country.optional(),
  lead_source: AffiliateId.optional().describe('Where the lead came from (a form, an event, a list)'),
  lead_campaign: AffiliateId.optional().describe('The campaign that brought the lead'),
  partner_code: AffiliateId.optional().describe('The partner code the lead came with'),
});

/**
 * A lead: a customer in `lead`, with no password anyone knows (a random one, hashed, so a
 * login answers as a wrong password) and no accounts. The country rules of sign-up apply.
 */
export async function createLead(
  em: EntityManager,
  actor: StaffCaller,
  input: z.output<typeof NewLeadSchema>,
): Promise<Customer> {
  assertCountryAllowed(await registrationSettings(em), input.country);
  const partner = await resolveReferral(em, input.partner_code);
  const lead = em.create(Customer, {
    email: normalizeEmail(input.email),
    passwordHash: await hashPassword(randomToken(32)),
    firstName: input.first_name,
    lastName: input.last_name,
    country: input.country ?? null,
    phone: input.phone ?? null,
    leadSource: input.lead_source ?? null,
    leadCampaign: input.lead_campaign ?? null,
    partnerCode: input.partner_code ?? null,
    partnerId: partner?.id ?? null,
    affiliateId: partner?.code ?? null,
    lifecycle: 'lead',
  });
  recordAudit(em, actor, { action: 'lead.created', entityType: 'customer', entityId: lead.id, after: customerView(lead) });
  recordEvent(em, {
    type: 'customer.created',
    aggregateType: 'customer',
    aggregateId: lead.id,
    customerId: lead.id,
    data: customerView(lead),
  });
  await assignNewCustomer(em, lead);
  await flushUnique(em, () => errors.conflict('EMAIL_TAKEN', 'A customer with this email exists'));
  return lead;
}

export const InviteSentSchema = z.object({ message: z.string(), expires_at: z.iso.datetime() });

/**
 * Sends a lead the `lead_invite` mail: a password-reset token (the reset flow's, one hour,
 * single use) whose use sets the lead's password and makes it `registered`. Audited. A
 * customer past `lead` already has a password: 409 NOT_A_LEAD.
 */
export async function inviteLead(
  em: EntityManager,
  s: { jobs: JobProducer; mailSecrets: SecretBox; resetUrl: string },
  actor: StaffCaller,
  scope: CustomerScope,
  id: string,
): Promise<z.output<typeof InviteSentSchema>> {
  const lead = await inScopeOr404(em, scope, await em.findOne(Customer, id), (c) => c.id, 'Lead');
  if (lead.lifecycle !== 'lead') throw errors.conflict('NOT_A_LEAD', 'The customer is past the lead stage and has a password');
  const token = randomToken(32);
  const expiresAt = new Date(Date.now() + RESET_TOKEN_TTL_SECONDS * 1000);
  em.create(PasswordResetToken, { customerId: lead.id, requestId: randomUUID(), tokenHash: sha256Hex(token), expiresAt });
  const mail = queueMail(em, s.mailSecrets, {
    template: 'lead_invite',
    locale: lead.locale,
    to: lead.email,
    data: { first_name: lead.firstName, valid_minutes: RESET_TOKEN_TTL_SECONDS / 60 },
    secretData: { reset_url: resetLink(s.resetUrl, token) },
  });
  recordAudit(em, actor, {
    action: 'lead.invited',
    entityType: 'customer',
    entityId: lead.id,
    after: { expires_at: expiresAt.toISOString() },
  });
  await em.flush();
  await dispatchMail(s.jobs, mail);
  return { message: 'The invitation is on its way', expires_at: expiresAt.toISOString() };
}
