import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { executeBound, executeNamed } from '../../db/bound-statement';
import { RefreshToken } from '../../entities/refresh-token.entity';
import { Session, type PrincipalType } from '../../entities/session.entity';
import { randomToken, sha256Hex } from '../../platform/crypto';
import { errors } from '../../platform/errors';
import { loadBrokerSettings } from './broker-settings';
import type { Identity } from './identity';
import { CONSUME_REFRESH_TOKEN, OPEN_SESSION } from './identity.queries';
import { findPrincipal } from './principals';

/** How long a session lives without a refresh; every refresh starts the period again. */
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

/** What a login or a refresh answers (the spec's Token pair). */
export const TokenPairSchema = z.object({
  access_token: z.string().describe('JWT (HS256), sent as Authorization: Bearer'),
  refresh_token: z.string().describe('Opaque, single use'),
  token_type: z.literal('bearer'),
  expires_in: z.int().describe('Seconds until the access token expires'),
});
export type TokenPair = z.output<typeof TokenPairSchema>;

/** One live session of the caller. */
export const SessionSchema = z.object({
  id: z.uuid(),
  created_at: z.iso.datetime(),
  last_used_at: z.iso.datetime(),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  current: z.boolean(),
});
export type SessionView = z.output<typeof SessionSchema>;

export function sessionView(s: Session, currentId: string | undefined): SessionView {
  return {
    id: s.id,
    created_at: s.createdAt.toISOString(),
    last_used_at: s.lastUsedAt.toISOString(),
    ip: s.ip ?? null,
    user_agent: s.userAgent ?? null,
    current: s.id === currentId,
  };
}

export interface ClientInfo {
  ip: string | null;
  userAgent: string | null;
}

function newRefreshToken(em: EntityManager, sessionId: string): string {
  const token = `rt_${randomToken(32)}`;
  em.create(RefreshToken, {
    sessionId,
    tokenHash: sha256Hex(token),
    expiresAt: new Date(Date.now() + REFRESH_TOKEN_TTL_SECONDS * 1000),
  });
  return token;
}

async function pairFor(
  em: EntityManager,
  identity: Identity,
  session: Session,
  refreshToken: string,
  accessTtlSeconds?: number,
): Promise<TokenPair> {
  // The lifetime is read at issue time, so a change of the broker setting applies to the next login or refresh.
  const ttl = accessTtlSeconds ?? (await loadBrokerSettings(em, identity.defaultAccessTokenTtl)).accessTokenTtlSeconds;
  return tokenPair(
    identity,
    { sessionId: session.id, principalId: session.principalId, type: session.principalType },
    refreshToken,
    ttl,
  );
}

async function tokenPair(
  identity: Identity,
  session: { sessionId: string; principalId: string; type: PrincipalType },
  refreshToken: string,
  ttl: number,
): Promise<TokenPair> {
  const accessToken = await identity.accessTokens.sign({
    sub: session.principalId,
    type: session.type,
    sid: session.sessionId,
    ttlSeconds: ttl,
  });
  return { access_token: accessToken, refresh_token: refreshToken, token_type: 'bearer', expires_in: ttl };
}

/**
 * Every login makes a session and its first token pair. Hot path (each login): the session
 * row, its first refresh token, the principal's permissions (for the session cache) and the
 * access-token lifetime in one call of the open_session function (src/db/functions, where
 * its plans are kept per connection), one round trip where the
 * unit of work took seven (begin, two inserts, commit, the permissions, the settings).
 */
export async function openSession(
  em: EntityManager,
  identity: Identity,
  type: PrincipalType,
  principalId: string,
  client: ClientInfo,
): Promise<TokenPair> {
  const now = new Date();
  const expiresAt = new Date(now.getTime() + REFRESH_TOKEN_TTL_SECONDS * 1000);
  const sessionId = randomUUID();
  const refreshToken = `rt_${randomToken(32)}`;
  // Its values as parameters (executeBound): a login is a hot path, and em.execute would quote them all into the text.
  const [row] = await executeBound<{ ttl: number | null; permissions: string[] }>(
    em,
    OPEN_SESSION.bind({
      session_id: sessionId,
      now,
      type,
      principal_id: principalId,
      ip: client.ip?.slice(0, 64) ?? null,
      user_agent: client.userAgent?.slice(0, 512) ?? null,
      expires_at: expiresAt,
      token_id: randomUUID(),
      token_hash: sha256Hex(refreshToken),
    }),
  );
  await identity.sessions.fill(sessionId, { state: 'active', principalId, principalType: type, permissions: row!.permissions });
  // No settings row yet (a fresh database): loadBrokerSettings writes the defaults.
  const ttl = row!.ttl ?? (await loadBrokerSettings(em, identity.defaultAccessTokenTtl)).accessTokenTtlSeconds;
  return tokenPair(identity, { sessionId, principalId, type }, refreshToken, ttl);
}

/**
 * Exchanges a refresh token for a new pair. The token is consumed by one conditional
 * UPDATE, so of any number of concurrent exchanges exactly one wins. Presenting a token
 * that was already used is taken as theft (reuse detection): the whole session is revoked.
 */
export async function refreshSession(em: EntityManager, identity: Identity, token: string): Promise<TokenPair> {
  const hash = sha256Hex(token);
  const outcome = await em.transactional(async (tx) => {
    const consumed = await executeNamed<{ session_id: string }>(tx, CONSUME_REFRESH_TOKEN.bind({ token_hash: hash }));
    if (consumed.length === 0) return undefined;
    const session = await tx.findOne(Session, { id: consumed[0]!.session_id, revokedAt: null, expiresAt: { $gt: new Date() } });
    const principal = session && (await findPrincipal(tx, session.principalType, session.principalId));
    if (!session || !principal?.isActive) return undefined;
    session.lastUsedAt = new Date();
    session.expiresAt = new Date(Date.now() + REFRESH_TOKEN_TTL_SECONDS * 1000);
    return { session, refreshToken: newRefreshToken(tx, session.id) };
  });
  if (!outcome) {
    const known = await em.findOne(RefreshToken, { tokenHash: hash });
    if (known?.usedAt) await revokeSessions(em, identity, [known.sessionId], 'refresh_token_reuse');
    throw errors.unauthenticated('The refresh token is invalid, expired or already used');
  }
  return pairFor(em, identity, outcome.session, outcome.refreshToken);
}

/**
 * Revokes sessions: the cache tombstones go first, so by the time this returns no request
 * anywhere can authenticate with their tokens; then Postgres records it and the refresh
 * tokens stop working.
 */
export async function revokeSessions(em: EntityManager, identity: Identity, sessionIds: string[], reason: string): Promise<void> {
  if (sessionIds.length === 0) return;
  await identity.sessions.revoke(sessionIds);
  await em.nativeUpdate(Session, { id: { $in: sessionIds }, revokedAt: null }, { revokedAt: new Date(), revokedReason: reason });
}

export async function listSessions(
  em: EntityManager,
  type: PrincipalType,
  principalId: string,
  currentId: string | undefined,
): Promise<{ items: SessionView[] }> {
  const sessions = await em.find(
    Session,
    { principalType: type, principalId, revokedAt: null, expiresAt: { $gt: new Date() } },
    { orderBy: { createdAt: 'desc' } },
  );
  return { items: sessions.map((s) => sessionView(s, currentId)) };
}

/** Revokes one of the caller's own sessions; another principal's session is 404, as if absent. */
export async function revokeOwnSession(
  em: EntityManager,
  identity: Identity,
  type: PrincipalType,
  principalId: string,
  sessionId: string,
): Promise<void> {
  const session = await em.findOne(Session, { id: sessionId, principalType: type, principalId });
  if (!session) throw errors.notFound('Session');
  await revokeSessions(em, identity, [session.id], 'revoked_by_owner');
}
