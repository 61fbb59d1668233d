import { staffDataScope } from './staff-scope';
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { Session } from '../../entities/session.entity';
import { randomToken, sha256Hex } from '../../platform/crypto';
import type { StaffCaller } from '../../platform/caller';
import type { ClientInfo } from './sessions';
import { executeNamed } from '../../db/bound-statement';
import { TOUCH_DASHBOARD_SESSION } from './identity.queries';

/**
 * The queue dashboard's sign-in: a session of kind `dashboard`
 * whose only credential is an opaque cookie value, stored as its SHA-256. It is no access
 * token: presented as a Bearer token on the API it is not a JWT and is refused (401), and no
 * JWT is ever signed for such a session. It lives in the sessions table like any login, so
 * sign-out, DELETE /auth/sessions/{id}, revoking a user's sessions and deactivating the user
 * end it exactly as they end API sessions.
 */
export interface DashboardLifetimes {
  /** Without a request for this long, the session ends. */
  idleSeconds: number;
  /** However busy, the session ends this long after sign-in. */
  absoluteSeconds: number;
}

const COOKIE_PREFIX = 'ds_';

export async function openDashboardSession(
  em: EntityManager,
  userId: string,
  client: ClientInfo,
  lifetimes: DashboardLifetimes,
): Promise<{ sessionId: string; cookie: string }> {
  const cookie = `${COOKIE_PREFIX}${randomToken(32)}`;
  const now = new Date();
  const session = em.create(Session, {
    id: randomUUID(),
    principalType: 'user',
    principalId: userId,
    kind: 'dashboard',
    secretHash: sha256Hex(cookie),
    ip: client.ip?.slice(0, 64) ?? null,
    userAgent: client.userAgent?.slice(0, 512) ?? null,
    lastUsedAt: now,
    expiresAt: new Date(now.getTime() + Math.min(lifetimes.idleSeconds, lifetimes.absoluteSeconds) * 1000),
  });
  await em.flush();
  return { sessionId: session.id, cookie };
}

/**
 * The staff caller a dashboard cookie stands for, or undefined when it names no live session
 * of an active user. One statement: it finds the session, checks that it is neither revoked
 * nor past its end, and moves that end to the sooner of now + idle and sign-in + absolute
 * (so the expiry a session listing shows is the real one), and reads the user's current
 * permissions (a role change applies to the very next request, as on the API).
 */
export async function resolveDashboardSession(
  em: EntityManager,
  cookie: string,
  lifetimes: DashboardLifetimes,
): Promise<StaffCaller | undefined> {
  if (!cookie.startsWith(COOKIE_PREFIX) || cookie.length > 128) return undefined;
  const [row] = await executeNamed<{ id: string; principal_id: string; permissions: string[] }>(
    em,
    TOUCH_DASHBOARD_SESSION.bind({
      absolute_seconds: lifetimes.absoluteSeconds,
      idle_seconds: lifetimes.idleSeconds,
      secret_hash: sha256Hex(cookie),
    }),
  );
  if (!row) return undefined;
  return {
    kind: 'user',
    userId: row.principal_id,
    sessionId: row.id,
    permissions: new Set(row.permissions),
    dataScope: await staffDataScope(em, row.principal_id),
  };
}
