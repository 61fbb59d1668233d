import type { EntityManager } from '@mikro-orm/postgresql';
import { ApiToken } from '../../entities/api-token.entity';
import { StaffUser } from '../../entities/staff-user.entity';
import { randomToken, sha256Hex } from '../../platform/crypto';
import { errors, ValidationFailure } from '../../platform/errors';
import type { ApiTokenFacts, Identity } from './identity';
import { permissionsOf } from './principals';

/** Every API token starts with this, so it is recognisable (and so secret scanners can find leaked ones). */
export const API_TOKEN_PREFIX = 'tia_';

export function looksLikeApiToken(token: string): boolean {
  return token.startsWith(API_TOKEN_PREFIX);
}

export function apiTokenView(t: ApiToken) {
  return {
    id: t.id,
    name: t.name,
    token_prefix: t.tokenPrefix,
    scopes: t.scopes,
    issued_by: t.issuedById,
    created_at: t.createdAt.toISOString(),
    expires_at: t.expiresAt?.toISOString() ?? null,
    revoked_at: t.revokedAt?.toISOString() ?? null,
    last_used_at: t.lastUsedAt?.toISOString() ?? null,
  };
}

/** Adds to the unit of work a token whose scopes are a subset of the issuer's own permissions; the text is returned once. */
export async function issueApiToken(
  em: EntityManager,
  issuerId: string,
  issuerPermissions: ReadonlySet<string>,
  input: { name: string; scopes: string[]; expires_in_days?: number | undefined },
) {
  const beyond = input.scopes.map((s, i) => [s, i] as const).filter(([s]) => !issuerPermissions.has(s));
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
    issuedById: issuerId,
    expiresAt: input.expires_in_days ? new Date(Date.now() + input.expires_in_days * 86_400_000) : null,
  });
  // The caller flushes, so the token and its audit row commit together.
  return { token, text };
}

/** Resolves a presented token from the cache, or Postgres on a miss; undefined when not usable. */
export async function resolveApiToken(em: EntityManager, identity: Identity, text: string): Promise<ApiTokenFacts | undefined> {
  const hash = sha256Hex(text);
  let cached;
  try {
    cached = await identity.apiTokens.get(hash);
  } catch {
    cached = undefined; // Redis unreachable: Postgres decides below.
  }
  if (cached) return cached.state === 'active' ? cached : undefined;

  const token = await em.findOne(ApiToken, { tokenHash: hash });
  const issuer = token && (await em.findOne(StaffUser, { id: token.issuedById }));
  const expired = token?.expiresAt ? token.expiresAt.getTime() <= Date.now() : false;
  if (!token || token.revokedAt || expired || !issuer?.isActive) return undefined;
  // A token never grants more than its issuer still holds.
  const held = new Set(await permissionsOf(em, 'user', issuer.id));
  const facts: ApiTokenFacts = { tokenId: token.id, userId: issuer.id, permissions: token.scopes.filter((s) => held.has(s)) };
  const ttl = token.expiresAt ? Math.floor((token.expiresAt.getTime() - Date.now()) / 1000) : undefined;
  await identity.apiTokens.fill(hash, { state: 'active', ...facts }, ttl).catch(() => undefined);
  return facts;
}

/** Revokes at once: the cache tombstone is written now; the caller's flush records it in Postgres. */
export async function revokeApiToken(em: EntityManager, identity: Identity, id: string): Promise<ApiToken> {
  const token = await em.findOne(ApiToken, { id });
  if (!token) throw errors.notFound('API token');
  if (!token.revokedAt) {
    await identity.apiTokens.revoke([token.tokenHash]);
    token.revokedAt = new Date();
  }
  return token;
}
