import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Customer } from '../../entities/customer.entity';
import { PendingRegistration } from '../../entities/pending-registration.entity';
import type { MailMessage } from '../../entities/mail-message.entity';
import type { JobProducer } from '../../jobs/job-producer';
import { flushUnique } from '../../db/flush-unique';
import { randomToken, sha256Hex } from '../../platform/crypto';
import { errors, fieldError } from '../../platform/errors';
import type { SecretBox } from '../../platform/secret-box';
import { openWallet } from '../accounts/accounts';
import { recordAudit } from '../audit/audit';
import { customerView } from '../customers/customers';
import { recordEvent } from '../events/outbox';
import type { Identity } from '../identity/identity';
import { assertPasswordPolicy } from '../identity/password-policy';
import { hashPassword } from '../identity/passwords';
import { normalizeEmail } from '../identity/principals';
import { openSession, type ClientInfo, type TokenPair } from '../identity/sessions';
import { dispatchMail, queueMail } from '../mail/mail-outbox';
import { assertCountryAllowed, registrationSettings } from './registration-rules';
import { assignNewCustomer } from '../teams/assignment';
import { holdSignup, screenSignup } from '../fraud/screens';

/** A confirmation link works for 24 hours, once. */
export const REGISTRATION_TOKEN_TTL_HOURS = 24;

export const RegistrationAcceptedSchema = z.object({ message: z.string() });
export const REGISTRATION_ACCEPTED = {
  message: 'Check your mailbox: a message with a link to confirm your registration is on its way.',
} as const;

export interface Registration {
  email: string;
  password: string;
  first_name: string;
  last_name: string;
  country: string;
  phone?: string | undefined;
  locale?: string | undefined;
  ref?: string | undefined;
  promo_code?: string | undefined;
}

export interface RegistrationServices {
  identity: Identity;
  jobs: JobProducer;
  mailSecrets: SecretBox;
  confirmUrl: string;
}

export function confirmLink(base: string, token: string): string {
  return `${base}${base.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`;
}

/**
 * POST /customers/register. Every attempt from the address counts against the broker's hourly
 * limit, refused ones included. A new email gets a pending registration and a confirmation
 * mail; an email a customer already uses gets a mail telling its owner someone tried, and the
 * caller the same answer, so the answer never tells whether an email is known. The password is
 * hashed on both paths, which keeps their cost alike.
 */
export async function register(
  em: EntityManager,
  s: RegistrationServices,
  input: Registration,
  client: ClientInfo & { deviceId: string | null },
): Promise<void> {
  const settings = await registrationSettings(em);
  await s.identity.registrationThrottle.take([{ key: `address:${client.ip ?? 'unknown'}`, limit: settings.max_per_ip_per_hour }]);
  assertCountryAllowed(settings, input.country);
  const email = normalizeEmail(input.email);
  assertPasswordPolicy(input.password, { email, names: [input.first_name, input.last_name] });
  // The `signup` fraud rules, for a known email and a new one alike (the answer must not differ):
  // a block is 403 FRAUD_BLOCKED; a review is kept with the pending registration for its confirmation.
  const reviewEvaluationId = await screenSignup(em, { email, country: input.country, ip: client.ip, deviceId: client.deviceId });
  const passwordHash = await hashPassword(input.password);
  const owner = await em.findOne(Customer, { email });
  let mail: MailMessage;
  if (owner) {
    mail = queueMail(em, s.mailSecrets, {
      template: 'registration_attempt',
      locale: owner.locale,
      to: owner.email,
      data: { first_name: owner.firstName },
    });
  } else {
    const token = randomToken(32);
    em.create(PendingRegistration, {
      email,
      passwordHash,
      firstName: input.first_name,
      lastName: input.last_name,
      country: input.country,
      locale: input.locale ?? 'en',
      phone: input.phone ?? null,
      partnerCode: input.ref ?? null,
      promoCode: input.promo_code ?? null,
      deviceId: client.deviceId,
      clientIp: client.ip,
      fraudEvaluationId: reviewEvaluationId,
      tokenHash: sha256Hex(token),
      expiresAt: new Date(Date.now() + REGISTRATION_TOKEN_TTL_HOURS * 3600_000),
    });
    mail = queueMail(em, s.mailSecrets, {
      template: 'registration_confirm',
      locale: input.locale ?? 'en',
      to: email,
      data: { first_name: input.first_name, valid_hours: REGISTRATION_TOKEN_TTL_HOURS },
      secretData: { confirm_url: confirmLink(s.confirmUrl, token) },
    });
  }
  await em.flush();
  await dispatchMail(s.jobs, mail);
}

const invalidToken = () => fieldError('body', ['token'], 'The confirmation token is invalid, expired or already used');

/**
 * POST /customers/register/confirm: a live token creates the customer (lifecycle `registered`)
 * and its wallet, consumes the token in the same transaction, and logs the customer in. Of two
 * confirmations racing with one token, one wins (the token is consumed by a conditional
 * update); an email taken since the mail was sent is 409 EMAIL_TAKEN.
 */
export async function confirmRegistration(
  em: EntityManager,
  identity: Identity,
  token: string,
  client: ClientInfo,
): Promise<{ customer: Customer; pair: TokenPair }> {
  const tokenHash = sha256Hex(token);
  const pending = await em.findOne(PendingRegistration, { tokenHash, usedAt: null, expiresAt: { $gt: new Date() } });
  if (!pending) throw invalidToken();
  const customer = await em.transactional(async (tx) => {
    const consumed = await tx.nativeUpdate(PendingRegistration, { id: pending.id, usedAt: null }, { usedAt: new Date() });
    if (consumed === 0) throw invalidToken();
    const created = tx.create(Customer, {
      email: pending.email,
      passwordHash: pending.passwordHash,
      firstName: pending.firstName,
      lastName: pending.lastName,
      locale: pending.locale,
      country: pending.country,
      phone: pending.phone ?? null,
      partnerCode: pending.partnerCode ?? null,
      promoCode: pending.promoCode ?? null,
      signupDeviceId: pending.deviceId ?? null,
      lifecycle: 'registered',
      // A sign-up the fraud rules sent to review may close positions and withdraw only, until a case decides.
      access: pending.fraudEvaluationId ? 'close_only' : 'full',
    });
    openWallet(tx as EntityManager, created);
    await tx.nativeUpdate(PendingRegistration, { id: pending.id }, { customerId: created.id });
    // The customer acted through a mailed token, not a staff login: the trail names no staff actor.
    recordAudit(tx as EntityManager, 'system', {
      action: 'customer.registered',
      entityType: 'customer',
      entityId: created.id,
      after: customerView(created),
    });
    recordEvent(tx as EntityManager, {
      type: 'customer.created',
      aggregateType: 'customer',
      aggregateId: created.id,
      customerId: created.id,
      data: customerView(created),
    });
    await assignNewCustomer(tx as EntityManager, created);
    await flushUnique(tx as EntityManager, () => errors.conflict('EMAIL_TAKEN', 'A customer with this email exists'));
    await holdSignup(tx as EntityManager, created, {
      ip: pending.clientIp ?? null,
      deviceId: pending.deviceId ?? null,
      reviewEvaluationId: pending.fraudEvaluationId ?? null,
    });
    return created;
  });
  return { customer, pair: await openSession(em, identity, 'customer', customer.id, client) };
}
