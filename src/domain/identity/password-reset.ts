import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Customer } from '../../entities/customer.entity';
import { PasswordResetToken } from '../../entities/password-reset-token.entity';
import { Session } from '../../entities/session.entity';
import type { PayloadOf } from '../../jobs/job-definition';
import type { JobProducer } from '../../jobs/job-producer';
import { PasswordResetJob } from '../../jobs/password-reset.job';
import { randomToken, sha256Hex } from '../../platform/crypto';
import type { SecretBox } from '../../platform/secret-box';
import { fieldError } from '../../platform/errors';
import type { Identity } from './identity';
import { recordAudit } from '../audit/audit';
import { assertPasswordPolicy } from './password-policy';
import { hashPassword } from './passwords';
import { RESET_LIMITS } from './reset-limits';
import { normalizeEmail } from './principals';
import { revokeSessions } from './sessions';
import { dispatchMail, queueMail } from '../mail/mail-outbox';
import type { MailMessage } from '../../entities/mail-message.entity';
import { executeNamed } from '../../db/bound-statement';
import { CLOSE_RESET_TOKENS, CONSUME_RESET_TOKEN } from './identity.queries';
import { namedStatement } from '../../platform/named-sql';
import { eventInsertSql } from '../events/outbox';

/** A reset token works for one hour, once. */
export const RESET_TOKEN_TTL_SECONDS = 3600;
/**
 * At most one reset mail per customer in this long: a request inside it is answered the same
 * and sends nothing new (the mail already sent still works for an hour).
 */
export const RESET_MAIL_INTERVAL_SECONDS = 600;

export const ResetRequestedSchema = z.object({ detail: z.string() });
export const RESET_REQUESTED = {
  detail: 'If an account uses this email, a message with a link to choose a new password is on its way.',
} as const;

export interface ResetServices {
  jobs: JobProducer;
  mailSecrets: SecretBox;
  resetUrl: string;
}

export function resetLink(base: string, token: string): string {
  return `${base}${base.includes('?') ? '&' : '?'}token=${encodeURIComponent(token)}`;
}

/**
 * POST /customers/password-reset/forgot, the request path: the throttle, then a job carrying
 * the email. The same Redis calls for every email, known or not, and no database lookup: the
 * time of the answer cannot depend on whether a customer uses the email, however loaded the
 * service is (a floor on the answer time only hides the difference until load pushes the
 * known-email work past it).
 */
export async function requestPasswordReset(
  s: { identity: Identity; jobs: JobProducer },
  emailText: string,
  clientIp: string | null,
): Promise<void> {
  const email = normalizeEmail(emailText);
  const address = clientIp ?? 'unknown';
  await s.identity.resetThrottle.take([
    { key: `email-address:${sha256Hex(`${email} ${address}`)}`, limit: RESET_LIMITS.emailPerAddress },
    { key: `address:${address}`, limit: RESET_LIMITS.address },
  ]);
  await s.jobs.enqueue(PasswordResetJob, { request_id: randomUUID(), email });
}

export type ResetOutcome = 'queued' | 'no_customer' | 'already_done' | 'recently_sent';

/**
 * The password-reset job: for an active customer with this email, a token (stored as its
 * SHA-256, keyed by the request) and a `password_reset` mail row committed together, then the
 * send job. The customer row is locked for the decision, so of two requests racing for one
 * customer the second sees the first's token. Nothing is made when the request already made
 * its token (the job's retry) or the customer had a token in the last
 * RESET_MAIL_INTERVAL_SECONDS. A crash after the commit and before the send job is added
 * leaves a queued mail row, which the outbox relay re-adds.
 */
export async function sendPasswordReset(
  em: EntityManager,
  s: ResetServices,
  request: PayloadOf<typeof PasswordResetJob>,
): Promise<ResetOutcome> {
  const token = randomToken(32);
  const done = await em.transactional(async (tx): Promise<{ outcome: ResetOutcome; mail?: MailMessage }> => {
    const customer = await tx.findOne(
      Customer,
      { email: request.email, isActive: true },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!customer) return { outcome: 'no_customer' };
    if ((await tx.count(PasswordResetToken, { requestId: request.request_id })) > 0) return { outcome: 'already_done' };
    const since = new Date(Date.now() - RESET_MAIL_INTERVAL_SECONDS * 1000);
    if ((await tx.count(PasswordResetToken, { customerId: customer.id, createdAt: { $gt: since } })) > 0) {
      return { outcome: 'recently_sent' };
    }
    tx.create(PasswordResetToken, {
      customerId: customer.id,
      requestId: request.request_id,
      tokenHash: sha256Hex(token),
      expiresAt: new Date(Date.now() + RESET_TOKEN_TTL_SECONDS * 1000),
    });
    const mail = queueMail(tx as EntityManager, s.mailSecrets, {
      template: 'password_reset',
      locale: customer.locale,
      to: customer.email,
      data: { first_name: customer.firstName, last_name: customer.lastName, valid_minutes: RESET_TOKEN_TTL_SECONDS / 60 },
      secretData: { reset_url: resetLink(s.resetUrl, token), reset_token: token },
    });
    return { outcome: 'queued', mail };
  });
  if (done.mail) await dispatchMail(s.jobs, done.mail);
  return done.outcome;
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
    const consumed = await executeNamed<{ id: string }>(tx, CONSUME_RESET_TOKEN.bind({ token_hash: hash }));
    if (consumed.length === 0) throw invalidToken();
    await executeNamed(tx, CLOSE_RESET_TOKENS.bind({ customer_id: customer.id }));
    await tx.nativeUpdate(Customer, { id: customer.id }, { passwordHash, updatedAt: new Date() });
    // A lead's invitation is a reset mail: choosing the password through it registers the lead.
    await executeNamed(tx, LEAD_REGISTERED.bind({ customer_id: customer.id }));
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

/**
 * A lead whose invitation was used (its password chosen through the reset flow) becomes
 * `registered`, with its event; any other customer is left as it is.
 */
export const LEAD_REGISTERED = namedStatement<{ customer_id: string }>(
  `with c as (
  update customers set lifecycle = 'registered', updated_at = now()
   where id = :customer_id::uuid and lifecycle = 'lead'
  returning id
), e as (
  ${eventInsertSql({
    type: 'customer.lifecycle_changed',
    aggregateType: 'customer',
    aggregateId: 'c.id::text',
    customerId: 'c.id',
    data: `json_build_object('customer_id', c.id, 'from', 'lead', 'to', 'registered')`,
    at: 'now()',
    from: 'c',
  })}
)
select count(*)::int as n from c`,
);
