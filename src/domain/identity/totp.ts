import { generateSecret, generateURI, verify } from 'otplib';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { BackupCode } from '../../entities/backup-code.entity';
import type { PrincipalType } from '../../entities/session.entity';
import { randomInt } from 'node:crypto';
import { sha256Hex } from '../../platform/crypto';
import { errors, fieldError } from '../../platform/errors';
import type { Identity } from './identity';
import type { Principal } from './principals';
import { executeNamed } from '../../db/bound-statement';
import { ACCEPT_TOTP_STEP, CONSUME_BACKUP_CODE } from './identity.queries';

/** RFC 6238: 30-second steps, 6 digits, SHA-1 (otplib's defaults, spelled out here). */
const TOTP = { period: 30, digits: 6, algorithm: 'sha1' } as const;
/** A code is accepted one step either side of now (otplib counts the tolerance in seconds). */
const TOLERANCE_S = TOTP.period;
/** 160 bits, the size RFC 4226 recommends and the one earlier secrets have. */
const SECRET_BYTES = 20;
const BACKUP_CODE_COUNT = 10;
const ISSUER = 'Trading Back Office';

export const TotpSetupSchema = z.object({ secret: z.string(), otpauth_url: z.string().meta({ format: 'uri' }) });
export const BackupCodesSchema = z.object({ backup_codes: z.array(z.string()) });

/** Starts enrolment: a new secret, kept pending (sealed) until a code proves the app has it. */
export async function setupTotp(
  em: EntityManager,
  identity: Identity,
  principal: Principal,
): Promise<z.output<typeof TotpSetupSchema>> {
  if (principal.totpEnabled) throw errors.conflict('TOTP_ALREADY_ENABLED', 'Two-factor authentication is already enabled');
  const secret = generateSecret({ length: SECRET_BYTES });
  principal.totpPendingSecret = identity.totpBox.seal(secret);
  await em.flush();
  return { secret, otpauth_url: generateURI({ ...TOTP, issuer: ISSUER, label: principal.email, secret }) };
}

/** Turns TOTP on with a code from the pending secret and returns the ten backup codes, once. */
export async function enableTotp(
  em: EntityManager,
  identity: Identity,
  type: PrincipalType,
  principal: Principal,
  code: string,
): Promise<z.output<typeof BackupCodesSchema>> {
  if (principal.totpEnabled) throw errors.conflict('TOTP_ALREADY_ENABLED', 'Two-factor authentication is already enabled');
  if (!principal.totpPendingSecret) throw errors.conflict('TOTP_NOT_SET_UP', 'Call /auth/totp/setup first');
  const secret = identity.totpBox.open(principal.totpPendingSecret, `the pending TOTP seed of ${type} ${principal.id}`);
  if (!(await acceptTotpCode(em, type, principal.id, secret, code))) throw fieldError('body', ['code'], 'The code is not valid');

  const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
  await em.transactional(async (tx) => {
    await tx.nativeDelete(BackupCode, { principalType: type, principalId: principal.id });
    for (const c of codes) tx.create(BackupCode, { principalType: type, principalId: principal.id, codeHash: hashBackupCode(c) });
    const p = tx.merge(principal);
    p.totpSecret = principal.totpPendingSecret;
    p.totpPendingSecret = null;
    p.totpEnabled = true;
  });
  return { backup_codes: codes };
}

/** Turns TOTP off; it takes a current code (or a backup code), not just a session. */
export async function disableTotp(
  em: EntityManager,
  identity: Identity,
  type: PrincipalType,
  principal: Principal,
  code: string,
) {
  if (!principal.totpEnabled) throw errors.conflict('TOTP_NOT_ENABLED', 'Two-factor authentication is not enabled');
  if (!(await verifySecondFactor(em, identity, type, principal, code)))
    throw fieldError('body', ['code'], 'The code is not valid');
  await em.transactional(async (tx) => {
    await tx.nativeDelete(BackupCode, { principalType: type, principalId: principal.id });
    const p = tx.merge(principal);
    p.totpEnabled = false;
    p.totpSecret = null;
    p.totpPendingSecret = null;
    p.totpLastStep = null;
  });
}

/** A 6-digit TOTP code or one of the backup codes; either is accepted once only. */
export async function verifySecondFactor(
  em: EntityManager,
  identity: Identity,
  type: PrincipalType,
  principal: Pick<Principal, 'id' | 'totpSecret'>,
  code: string,
): Promise<boolean> {
  if (!principal.totpSecret) return false;
  const trimmed = code.replace(/\s+/g, '');
  if (/^\d{6}$/.test(trimmed))
    return acceptTotpCode(
      em,
      type,
      principal.id,
      identity.totpBox.open(principal.totpSecret, `the TOTP seed of ${type} ${principal.id}`),
      trimmed,
    );
  return consumeBackupCode(em, type, principal.id, trimmed);
}

/**
 * Accepts a code for the step it belongs to only if no code of that step or a later one
 * was accepted before. The check-and-set is one conditional UPDATE, so two logins racing
 * with the same code cannot both win.
 */
async function acceptTotpCode(
  em: EntityManager,
  type: PrincipalType,
  id: string,
  secret: string,
  code: string,
): Promise<boolean> {
  if (!/^\d{6}$/.test(code)) return false;
  const match = await verify({ ...TOTP, secret, token: code, epochTolerance: TOLERANCE_S });
  // The functional verify is typed for HOTP too; a TOTP match names the step it matched.
  if (!match.valid || !('timeStep' in match)) return false;
  const step = match.timeStep;
  const accepted = await executeNamed(em, ACCEPT_TOTP_STEP[type].bind({ step, id }));
  return accepted.length === 1;
}

async function consumeBackupCode(em: EntityManager, type: PrincipalType, id: string, code: string): Promise<boolean> {
  const used = await executeNamed(em, CONSUME_BACKUP_CODE.bind({ code_hash: hashBackupCode(code), type, principal_id: id }));
  return used.length === 1;
}

/** 16 characters from a 31-letter alphabet without look-alikes (79 bits), as xxxx-xxxx-xxxx-xxxx. */
function newBackupCode(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
  let out = '';
  for (let i = 0; i < 16; i++) out += alphabet[randomInt(alphabet.length)];
  return out.match(/.{4}/g)!.join('-');
}

function hashBackupCode(code: string): string {
  return sha256Hex(code.toLowerCase().replace(/[^a-z0-9]/g, ''));
}
