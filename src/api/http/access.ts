import type { Request } from 'express';
import type { EntityManager } from '@mikro-orm/postgresql';
import { authenticate, sessionCaller } from '../../domain/identity/authenticate';
import type { Caller, CustomerCaller, SessionCaller, StaffCaller } from '../../platform/caller';
import { errors } from '../../platform/errors';
import type { Identity } from '../../domain/identity/identity';
import type { Access, RouteSpec } from './route';

/**
 * Path families and the access kinds their routes may declare.
 * Matched case-insensitively and including the bare prefix (`/api/crm`), because express
 * routes that way: a route declared as `/API/Admin/x` or `/api/crm` is served at
 * `/api/admin/x` and `/api/crm/`, and must not escape its family's rule.
 */
const FAMILIES: Array<{ prefix: RegExp; allowed: Access['kind'][] }> = [
  { prefix: /^\/api\/(admin|crm|backoffice|platform)(\/|$)/i, allowed: ['staff'] },
  { prefix: /^\/api\/customer(\/|$)/i, allowed: ['customer'] },
  { prefix: /^\/customers\/me(\/|$)/i, allowed: ['customer'] },
  { prefix: /^\/(groups|orders|prop|risk|email-templates|webhooks|simulator)(\/|$)/i, allowed: ['staff', 'staff_or_customer'] },
  { prefix: /^\/auth(\/|$)/i, allowed: ['session'] },
];

/** Password reset lives under /customers/ but outside /customers/me: public by the allow-list only. */
const CUSTOMER_PUBLIC = { prefix: /^\/customers\//i, allowed: [] as Access['kind'][] };

/** The only routes inside a guarded family that anyone may call without a token. */
export const PUBLIC_ROUTES = new Set([
  'POST /api/admin/users/login',
  'POST /api/customer/login',
  'POST /auth/refresh',
  'POST /customers/password-reset/forgot',
  'POST /customers/password-reset/confirm',
  'POST /customers/register',
  'POST /customers/register/confirm',
]);

/** Refuses to mount a route table in which a route's declared access breaks its family's rule. */
export function checkRouteFamilies(routes: RouteSpec[]): void {
  const problems: string[] = [];
  for (const route of routes) {
    const name = `${route.method.toUpperCase()} ${route.path}`;
    const family =
      FAMILIES.find((f) => f.prefix.test(route.path)) ?? (CUSTOMER_PUBLIC.prefix.test(route.path) ? CUSTOMER_PUBLIC : undefined);
    if (!family) continue;
    if (route.access.kind === 'public') {
      if (!PUBLIC_ROUTES.has(name)) problems.push(`${name} is public inside a guarded family but not in PUBLIC_ROUTES`);
    } else if (!family.allowed.includes(route.access.kind)) {
      problems.push(`${name} declares ${route.access.kind} access in a ${family.allowed.join('/')} family`);
    }
  }
  if (problems.length) throw new Error(`Route table breaks the access rules: ${problems.join('; ')}`);
}

/** Authenticates and authorises a request for its route: 401 without a usable token, 403 when the token does not fit. */
export async function authorize(
  access: Access,
  req: Request,
  /** The request's unit of work, forked on first use: a public route never forks one. */
  em: () => EntityManager,
  identity: Identity,
  /** The route also takes a stream ticket as `?ticket=` (a browser's EventSource sends no header). */
  acceptsTicket = false,
): Promise<Caller | undefined> {
  if (access.kind === 'public') return undefined;
  const header = req.get('authorization');
  const ticket = acceptsTicket && !header ? (req.query as Record<string, unknown>).ticket : undefined;
  const caller =
    typeof ticket === 'string' ? await ticketCaller(em(), identity, ticket) : await authenticate(em(), identity, header);
  if (!caller) throw errors.unauthenticated();
  switch (access.kind) {
    case 'staff':
      if (caller.kind === 'customer') throw errors.forbidden('This route is for staff');
      if (!caller.permissions.has(access.permission)) throw errors.forbidden(`Missing permission ${access.permission}`);
      return caller;
    case 'customer':
      if (caller.kind !== 'customer') throw errors.forbidden('This route is for customers');
      return caller;
    case 'session':
      if (caller.kind === 'api_token') throw errors.forbidden('API tokens have no session');
      return caller;
    case 'staff_or_customer':
      if (caller.kind !== 'customer' && !caller.permissions.has(access.permission))
        throw errors.forbidden(`Missing permission ${access.permission}`);
      return caller;
    case 'authenticated':
      return caller;
  }
}

/** A stream ticket's holder, checked as its token would be; the ticket is spent whatever the outcome. */
async function ticketCaller(em: EntityManager, identity: Identity, ticket: string): Promise<Caller> {
  const holder = await identity.streamTickets.redeem(ticket);
  if (!holder) throw errors.unauthenticated('The stream ticket is invalid, expired or already used');
  if (holder.dashboard) {
    // A dashboard session is never cached as active (it has no tokens), but its revocation writes a tombstone.
    const cached = await identity.sessions.get(holder.sid).catch(() => undefined);
    if (cached?.state === 'revoked') throw errors.unauthenticated('The session has been revoked');
    return { kind: 'user', userId: holder.sub, sessionId: holder.sid, permissions: new Set(holder.dashboard.permissions) };
  }
  return sessionCaller(em, identity, holder);
}

/** Narrowing helpers for handlers: the guard has already made them true. */
export function asStaff(caller: Caller | undefined): StaffCaller {
  if (!caller || caller.kind === 'customer') throw errors.forbidden();
  return caller;
}

export function asCustomer(caller: Caller | undefined): CustomerCaller {
  if (!caller || caller.kind !== 'customer') throw errors.forbidden();
  return caller;
}

export function asSession(caller: Caller | undefined): SessionCaller {
  if (!caller || caller.kind === 'api_token') throw errors.forbidden();
  return caller;
}
