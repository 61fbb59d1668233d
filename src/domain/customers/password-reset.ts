import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Customer } from '../../entities/customer.entity';
import { PasswordResetToken } from '../../entities/password-reset-token.entity';
import { Session } from '../../entities/session.entity';
import type { JobProducer } from '../../jobs/job-producer';
import { randomToken, sha256Hex } from '../../platform/crypto';
import type { SecretBox } from '../../platform/secret-box';
import { fieldError } from '../../platform/errors';
import type { Identity } from '../identity/identity';
import { recordAudit } from '../audit/audit';
import { assertPasswordPolicy } from '../identity/password-policy';
import { hashPassword } from '../identity/passwords';
import { normalizeEmail } from '../identity/principals';
import { revokeSessions } from '../identity/sessions';
import { dispatchMail, queueMail } from '../mail/mail-outbox';
import type { MailMessage } from '../../entities/mail-message.entity';

/** A reset token works for one hour, once. */
export const RESET_TOKEN_TTL_SECONDS = 3600;
/** Reset requests per email and per client address, in one-hour windows. */
export const RESET_LIMITS = { email: 5, address: 20, windowSeconds: 3600 } as const;
/**
 * Every answer to a reset request leaves no earlier than this after the request arrived, so
 * the time taken does not tell a known email (a token and a mail row written, a job added)
 * from an unknown one (one lookup). The work takes a few milliseconds; the floor hides it.
 */
export const RESET_ANSWER_FLOOR_MS = 150;

export const ResetRequestedSchema = z.object({ detail: z.string() });
export const RESET_REQUESTED = {
  detail: 'If an account uses this email, a message with a link to choose a new password is on its way.',
} as const;

export interface ResetServices {
  identity: Identity;
  jobs: JobProducer;
  mailSecrets: SecretBox;
  resetUrl: string;
}

export function resetLink(base: string, token: string): string {
  return `${base}${base.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`;
}

/**
 * POST /customers/password-reset/forgot: throttled per email and per address (counted for
 * every email, known or not), then, for an active customer with this email, a token (stored
 * as its SHA-256) and a `password_reset` mail row committed together; the send job is added
 * after the commit. Nothing is sent in the request, and the answer is the same either way.
 */
export async function requestPasswordReset(
  em: EntityManager,
  s: ResetServices,
  emailText: string,
  clientIp: string | null,
): Promise<void> {
  const email = normalizeEmail(emailText);
  await s.identity.resetThrottle.take([
    { key: `email:${sha256Hex(email)}`, limit: RESET_LIMITS.email },
    { key: `ip:${clientIp ?? 'unknown'}`, limit: RESET_LIMITS.address },
  ]);
  // Made for every request, so known and unknown emails do the same work up to the lookup.
  const token = randomToken(32);
  const mail = await em.transactional(async (tx): Promise<MailMessage | undefined> => {
    const customer = await tx.findOne(Customer, { email, isActive: true });
    if (!customer) return undefined;
    tx.create(PasswordResetToken, {
      customerId: customer.id,
      tokenHash: sha256Hex(token),
      expiresAt: new Date(Date.now() + RESET_TOKEN_TTL_SECONDS * 1000),
    });
    return queueMail(tx as EntityManager, s.mailSecrets, {
      template: 'password_reset',
      locale: customer.locale,
      to: customer.email,
      data: { first_name: customer.firstName, last_name: customer.lastName, valid_minutes: RESET_TOKEN_TTL_SECONDS / 60 },
      secretData: { reset_url: resetLink(s.resetUrl, token), reset_token: token },
    });
  });
  if (mail) await dispatchMail(s.jobs, mail);
}

const invalidToken = () => fieldError('body', ['token'], 'The reset token is invalid, expired or already used');

/**
 * POST /customers/password-reset/confirm: a live token sets the password (the policy of every
 * other password, 422 at `new_password`, which leaves the token unused), consumes every
 * outstanding reset token of the customer in the same transaction (audited as
 * `customer.password_reset`), and then revokes all of its sessions. Of two confirmations racing with one token, one wins: the token is consumed by a
 * conditional update.
 */
export async function confirmPasswordReset(
  em: EntityManager,
  identity: Identity,
  input: { token: string; new_password: string },
): Promise<void> {
  const hash = sha256Hex(input.token);
  const live = await em.findOne(PasswordResetToken, { tokenHash: hash, usedAt: null, expiresAt: { $gt: new Date() } });
  const customer = live && (await em.findOne(Customer, { id: live.customerId, isActive: true }));
  if (!live || !customer) throw invalidToken();
  assertPasswordPolicy(input.new_password, { email: customer.email, names: [customer.firstName, customer.lastName] }, [
    'new_password',
  ]);
  const passwordHash = await hashPassword(input.new_password);
  const sessionIds = await em.transactional(async (tx) => {
    const consumed = await tx.execute<Array<{ id: string }>>(
      'update password_reset_tokens set used_at = now(), updated_at = now() where token_hash = ? and used_at is null and expires_at > now() returning id',
      [hash],
    );
    if (consumed.length === 0) throw invalidToken();
    await tx.execute(
      'update password_reset_tokens set used_at = now(), updated_at = now() where customer_id = ? and used_at is null',
      [customer.id],
    );
    await tx.nativeUpdate(Customer, { id: customer.id }, { passwordHash, updatedAt: new Date() });
    const sessions = await tx.find(Session, { principalType: 'customer', principalId: customer.id, revokedAt: null });
    // The customer acted through a mailed token, not a staff login: the trail names no staff actor.
    recordAudit(tx as EntityManager, 'system', {
      action: 'customer.password_reset',
      entityType: 'customer',
      entityId: customer.id,
      after: { sessions_revoked: sessions.length },
    });
    return sessions.map((x) => x.id);
  });
  await revokeSessions(em, identity, sessionIds, 'password_reset');
}
