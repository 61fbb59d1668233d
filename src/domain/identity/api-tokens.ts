import type { StaffDataScope } from '../../platform/caller';
import { staffDataScope } from './staff-scope';
import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ApiToken } from '../../entities/api-token.entity';
import { StaffUser } from '../../entities/staff-user.entity';
import { randomToken, sha256Hex } from '../../platform/crypto';
import { errors, ValidationFailure } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import type { ApiTokenFacts, Identity } from './identity';
import { PermissionSchema, type Permission } from './permissions';
import { permissionsOf } from './principals';
import type { StaffCaller } from '../../platform/caller';
import { assertMayActOn } from './staff';

/** Every API token starts with this, so it is recognisable (and so secret scanners can find leaked ones). */
export const API_TOKEN_PREFIX = 'tia_';

export function looksLikeApiToken(token: string): boolean {
  return token.startsWith(API_TOKEN_PREFIX);
}

export const ApiTokenSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  token_prefix: z.string().describe('The first characters of the token, to tell tokens apart'),
  scopes: z.array(PermissionSchema),
  issued_by: z.uuid(),
  created_at: z.iso.datetime(),
  expires_at: z.iso.datetime().nullable(),
  revoked_at: z.iso.datetime().nullable(),
  last_used_at: z.iso.datetime().nullable(),
});
export type ApiTokenView = z.output<typeof ApiTokenSchema>;

/** The answer to issuing a token: the only time its text is shown. */
export const IssuedApiTokenSchema = ApiTokenSchema.extend({ token: z.string().describe('Shown once') });

export function apiTokenView(t: ApiToken): ApiTokenView {
  return {
    id: t.id,
    name: t.name,
    token_prefix: t.tokenPrefix,
    // Stored only through PermissionSchema (issueApiToken).
    scopes: t.scopes as Permission[],
    issued_by: t.issuedById,
    created_at: t.createdAt.toISOString(),
    expires_at: t.expiresAt?.toISOString() ?? null,
    revoked_at: t.revokedAt?.toISOString() ?? null,
    last_used_at: t.lastUsedAt?.toISOString() ?? null,
  };
}

export function issuedApiTokenView(t: ApiToken, text: string): z.output<typeof IssuedApiTokenSchema> {
  return { ...apiTokenView(t), token: text };
}

/** Adds to the unit of work a token whose scopes are a subset of the issuer's own permissions; the text is returned once. */
/** Issues a token whose scopes the issuer holds, audited; the token and its audit row commit together. */
export async function issueApiToken(
  em: EntityManager,
  issuer: StaffCaller,
  input: { name: string; scopes: string[]; expires_in_days?: number | undefined },
) {
  const beyond = input.scopes.map((s, i) => [s, i] as const).filter(([s]) => !issuer.permissions.has(s));
  if (beyond.length) {
    throw new ValidationFailure(
      beyond.map(([s, i]) => ({ loc: ['body', 'scopes', i], msg: `You do not hold the permission ${s}`, type: 'value_error' })),
    );
  }
  const text = `${API_TOKEN_PREFIX}${randomToken(32)}`;
  const token = em.create(ApiToken, {
    name: input.name,
    tokenHash: sha256Hex(text),
    tokenPrefix: text.slice(0, 12),
    scopes: [...new Set(input.scopes)].sort(),
    issuedById: issuer.userId,
    expiresAt: input.expires_in_days ? new Date(Date.now() + input.expires_in_days * 86_400_000) : null,
  });
  recordAudit(em, issuer, {
    action: 'api_token.created',
    entityType: 'api_token',
    entityId: token.id,
    after: apiTokenView(token),
  });
  await em.flush();
  return { token, text };
}

/** last_used_at is written at most once a minute per token, whatever the request rate. */
const LAST_USED_EVERY_SECONDS = 60;

/**
 * Resolves a presented token from the cache, or Postgres on a miss; undefined when not
 * usable. The cache read also tells whether this is the token's first use this minute, in
 * the same round trip, and only then is last_used_at written.
 */
export async function resolveApiToken(em: EntityManager, identity: Identity, text: string): Promise<ApiTokenFacts | undefined> {
  const hash = sha256Hex(text);
  let cached;
  let redisUp = true;
  try {
    const { value, firstUse } = await identity.apiTokens.getMarkingUse(hash, LAST_USED_EVERY_SECONDS);
    cached = value;
    if (value?.state === 'active' && firstUse) await recordUse(em, value.tokenId);
  } catch {
    cached = undefined; // Redis unreachable: Postgres decides below.
    redisUp = false;
  }
  if (cached) return cached.state === 'active' ? cached : undefined;

  const token = await em.findOne(ApiToken, { tokenHash: hash });
  const issuer = token && (await em.findOne(StaffUser, { id: token.issuedById }));
  const expired = token?.expiresAt ? token.expiresAt.getTime() <= Date.now() : false;
  if (!token || token.revokedAt || expired || !issuer?.isActive) return undefined;
  // A token never grants more than its issuer still holds.
  const facts = apiTokenFacts(token, new Set(await permissionsOf(em, 'user', issuer.id)), await staffDataScope(em, issuer.id));
  const ttl = token.expiresAt ? Math.floor((token.expiresAt.getTime() - Date.now()) / 1000) : undefined;
  if (redisUp) {
    await identity.apiTokens.fill(hash, { state: 'active', ...facts }, ttl).catch(() => undefined);
    if (await identity.apiTokens.markUse(hash, LAST_USED_EVERY_SECONDS).catch(() => false)) await recordUse(em, token.id);
  }
  return facts;
}

function recordUse(em: EntityManager, tokenId: string): Promise<unknown> {
  return em.nativeUpdate(ApiToken, { id: tokenId }, { lastUsedAt: new Date() });
}

/** The facts an API token carries: its scopes that its issuer still holds. */
export function apiTokenFacts(
  token: ApiToken,
  issuerPermissions: ReadonlySet<string>,
  issuerScope: StaffDataScope,
): ApiTokenFacts {
  return {
    tokenId: token.id,
    userId: token.issuedById,
    permissions: token.scopes.filter((s) => issuerPermissions.has(s)),
    dataScope: issuerScope,
  };
}

/** Revokes at once: the cache tombstone is written now; the caller's flush records it in Postgres. */
export async function revokeApiToken(em: EntityManager, identity: Identity, actor: StaffCaller, id: string): Promise<ApiToken> {
  const token = await em.findOne(ApiToken, { id });
  if (!token) throw errors.notFound('API token');
  // Another user's token is that user's credential: acting on it is acting on the user.
  if (token.issuedById !== actor.userId) await assertMayActOn(em, actor, token.issuedById);
  if (!token.revokedAt) {
    await identity.apiTokens.revoke([token.tokenHash]);
    token.revokedAt = new Date();
  }
  recordAudit(em, actor, {
    action: 'api_token.revoked',
    entityType: 'api_token',
    entityId: token.id,
    after: apiTokenView(token),
  });
  await em.flush();
  return token;
}
