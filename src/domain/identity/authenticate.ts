import type { EntityManager } from '@mikro-orm/postgresql';
import { Session } from '../../entities/session.entity';
import { errors } from '../../platform/errors';
import { looksLikeApiToken, resolveApiToken } from './api-tokens';
import type { Caller } from '../../platform/caller';
import type { Identity, SessionFacts } from './identity';
import { findPrincipal, permissionsOf } from './principals';
import { staffDataScope } from './staff-scope';

/** What a 401 says for an access token that does not verify: the most common one, the API description's example. */
export const INVALID_ACCESS_TOKEN = 'The access token is invalid or expired';

const BEARER = /^Bearer ([A-Za-z0-9._~+/=-]+)$/i;

/**
 * The permission set of a credential's facts, built once per facts object: the auth cache
 * hands out one frozen object per distinct cached value, so a session's requests share its
 * set until its cached facts change. Facts read from Postgres are new objects (a new set).
 */
const permissionSets = new WeakMap<{ permissions: readonly string[] }, ReadonlySet<string>>();

function permissionSet(facts: { permissions: readonly string[] }): ReadonlySet<string> {
  let set = permissionSets.get(facts);
  if (!set) permissionSets.set(facts, (set = new Set(facts.permissions)));
  return set;
}

/**
 * Resolves the Authorization header to a caller, or undefined when there is none.
 * A present but unusable credential is 401. In the normal case this costs a signature
 * check (once per token) and one Redis GET; Postgres is read only on a cache miss or when Redis is down.
 */
export async function authenticate(
  em: EntityManager,
  identity: Identity,
  header: string | undefined,
): Promise<Caller | undefined> {
  if (header === undefined || header === '') return undefined;
  const match = BEARER.exec(header.trim());
  if (!match) throw errors.unauthenticated('The Authorization header must be "Bearer <token>"');
  const token = match[1]!;

  if (looksLikeApiToken(token)) {
    const facts = await resolveApiToken(em, identity, token);
    if (!facts) throw errors.unauthenticated('The API token is invalid, expired or revoked');
    return {
      kind: 'api_token',
      userId: facts.userId,
      tokenId: facts.tokenId,
      permissions: permissionSet(facts),
      // A token sees what its issuer sees, as it holds at most what its issuer holds.
      dataScope: await staffDataScope(em, facts.userId),
    };
  }

  const claims = await identity.accessTokens.verify(token);
  if (!claims) throw errors.unauthenticated(INVALID_ACCESS_TOKEN);
  return sessionCaller(em, identity, claims);
}

/**
 * The caller of a login session, checked as a request's token is (revoked, expired, the
 * principal deactivated: 401): for a token's claims, or for a stream ticket's holder.
 */
export async function sessionCaller(
  em: EntityManager,
  identity: Identity,
  claims: { sub: string; sid: string; type: 'user' | 'customer' },
): Promise<Caller> {
  const facts = await sessionFacts(em, identity, claims.sid, claims.type);
  // A cache hit knows the session only by id, so the token's type is checked against the
  // session's here too (Postgres checks it in its query): else a token naming a staff
  // session with type `customer` would pass while the session is cached and fail after.
  if (!facts || facts.principalId !== claims.sub || facts.principalType !== claims.type)
    throw errors.unauthenticated('The session has been revoked');
  return claims.type === 'user'
    ? {
        kind: 'user',
        userId: claims.sub,
        sessionId: claims.sid,
        permissions: permissionSet(facts),
        dataScope: await staffDataScope(em, claims.sub),
      }
    : { kind: 'customer', customerId: claims.sub, sessionId: claims.sid };
}

async function sessionFacts(
  em: EntityManager,
  identity: Identity,
  sessionId: string,
  type: 'user' | 'customer',
): Promise<SessionFacts | undefined> {
  let redisUp = true;
  try {
    const cached = await identity.sessions.get(sessionId);
    if (cached) return cached.state === 'active' ? cached : undefined;
  } catch {
    redisUp = false;
  }
  // Only API sessions: a dashboard session has no access tokens (its cookie is its credential).
  const session = await em.findOne(Session, { id: sessionId, principalType: type, kind: 'api' });
  const live = session && !session.revokedAt && session.expiresAt.getTime() > Date.now();
  const principal = live ? await findPrincipal(em, type, session.principalId) : null;
  if (!session || !live || !principal?.isActive) {
    if (redisUp && session) await identity.sessions.fill(sessionId, { state: 'revoked' }).catch(() => undefined);
    return undefined;
  }
  const facts: SessionFacts = {
    principalId: principal.id,
    principalType: type,
    permissions: await permissionsOf(em, type, principal.id),
  };
  if (redisUp) await identity.sessions.fill(sessionId, { state: 'active', ...facts }).catch(() => undefined);
  return facts;
}
