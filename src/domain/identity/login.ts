import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import type { PrincipalType } from '../../entities/session.entity';
import { AppError } from '../../platform/errors';
import type { Identity } from './identity';
import { verifyPassword } from './passwords';
import { findLoginPrincipal, normalizeEmail } from './principals';
import { openSession, type ClientInfo, type TokenPair } from './sessions';
import { verifySecondFactor } from './totp';

export interface LoginInput {
  email: string;
  password: string;
  totp_code?: string | undefined;
}

export type LoginResult = { kind: 'tokens'; pair: TokenPair } | { kind: 'totp_required' };

/** The 202 answer of a login that needs a TOTP code: a status, not a failure, and no token. */
export const TotpRequiredSchema = z.object({ code: z.literal('TOTP_REQUIRED'), detail: z.string() });

export const TOTP_REQUIRED: z.output<typeof TotpRequiredSchema> = {
  code: 'TOTP_REQUIRED',
  detail: 'Send totp_code with the password',
};

/** One answer for an unknown email, a wrong password and a disabled account: no enumeration. */
export const invalidCredentials = () => new AppError(401, 'INVALID_CREDENTIALS', 'Invalid email or password');

/** A password check's outcome: who it is, or that a TOTP code must come too. */
export type LoginCheck = { kind: 'verified'; principalId: string } | { kind: 'totp_required' };

/**
 * The credential checks of a password login for staff (`user`) and customers, without opening
 * a session: the API login opens one with tokens, the queue dashboard one with a cookie.
 * Order matters: the throttle first, then the password (always hashed, even for an unknown
 * email), and only after a correct password is anything said about TOTP.
 */
export async function checkLogin(
  em: EntityManager,
  identity: Identity,
  type: PrincipalType,
  input: LoginInput,
  client: ClientInfo,
): Promise<LoginCheck> {
  const email = normalizeEmail(input.email);
  const address = client.ip ?? 'unknown';
  // Counts this attempt as a failure up front (see LoginThrottle): every refusal below stays counted.
  await identity.throttle.begin(type, email, address);

  const principal = await findLoginPrincipal(em, type, email);
  const passwordOk = await verifyPassword(principal?.passwordHash, input.password);
  if (!principal || !passwordOk || !principal.isActive) throw invalidCredentials();
  if (principal.totpEnabled) {
    if (!input.totp_code) {
      await identity.throttle.notFailed(type, email, address);
      return { kind: 'totp_required' };
    }
    if (!(await verifySecondFactor(em, identity, type, principal, input.totp_code))) {
      throw new AppError(401, 'INVALID_TOTP_CODE', 'The two-factor code is not valid');
    }
  }
  await identity.throttle.succeed(type, email, address);
  return { kind: 'verified', principalId: principal.id };
}

/** Password login on the API: a session and its first token pair. */
export async function login(
  em: EntityManager,
  identity: Identity,
  type: PrincipalType,
  input: LoginInput,
  client: ClientInfo,
  /** Policy on a verified login before its session opens (the fraud rules): it refuses by throwing. */
  screen?: (principalId: string) => Promise<void>,
): Promise<LoginResult> {
  const check = await checkLogin(em, identity, type, input, client);
  if (check.kind === 'totp_required') return check;
  if (screen) await screen(check.principalId);
  return { kind: 'tokens', pair: await openSession(em, identity, type, check.principalId, client) };
}
