import type { Request } from 'express';
import { z } from 'zod';
import { invalidCredentials, login, TOTP_REQUIRED, TotpRequiredSchema } from '../../domain/identity/login';
import { evaluateFraud } from '../../domain/fraud/evaluate';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../platform/errors';
import type { PrincipalType } from '../../entities/session.entity';
import { findPrincipal } from '../../domain/identity/principals';
import {
  listSessions,
  refreshSession,
  revokeOwnSession,
  SessionSchema,
  TokenPairSchema,
  type ClientInfo,
} from '../../domain/identity/sessions';
import { BackupCodesSchema, disableTotp, enableTotp, setupTotp, TotpSetupSchema } from '../../domain/identity/totp';
import { errors } from '../../platform/errors';
import { asSession } from '../http/access';
import { defineRoute, json, type RouteSpec } from '../http/route';

const LoginBody = z.object({
  email: z.string().min(1).max(320),
  password: z.string().min(1).max(1024),
  totp_code: z.string().min(1).max(64).optional().describe('A 6-digit TOTP code or a backup code; needed when TOTP is enabled'),
});

const CodeBody = z.object({ code: z.string().min(6).max(64) });
/** Token answers must not be cached by any intermediary (RFC 6749, section 5.1). */
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

function clientOf(req: Request): ClientInfo {
  return { ip: req.clientIp, userAgent: req.get('user-agent') ?? null };
}

/**
 * The `login` fraud rules: a block is answered as a wrong password (a blocked fraudster learns
 * nothing), a review lets the login through and opens or extends the customer's case.
 */
async function screenLogin(em: EntityManager, customerId: string): Promise<void> {
  try {
    await em.transactional((tx) => evaluateFraud(tx, 'login', { customerId }));
  } catch (err) {
    if (err instanceof AppError && err.code === 'FRAUD_BLOCKED') throw invalidCredentials();
    throw err;
  }
}

function loginRoute(path: string, type: PrincipalType, who: string): RouteSpec {
  return defineRoute({
    method: 'post',
    path,
    operationId: type === 'user' ? 'staffLogin' : 'customerLogin',
    summary: `${who} login`,
    description:
      'Answers an unknown email exactly as a wrong password (401 INVALID_CREDENTIALS, same cost). Failed logins are throttled per account and address (429 with Retry-After). With TOTP enabled and no totp_code: 202 TOTP_REQUIRED and no token.',
    tags: ['auth'],
    access: { kind: 'public' },
    body: LoginBody,
    responses: {
      200: { description: 'Token pair', schema: TokenPairSchema },
      202: { description: 'TOTP code required', schema: TotpRequiredSchema },
      401: { description: 'Invalid credentials or code' },
      429: { description: 'Too many failed logins' },
    },
    handler: async ({ body, em, services, req }) => {
      const result = await login(
        em,
        services.identity,
        type,
        body,
        clientOf(req),
        type === 'customer' ? (id) => screenLogin(em, id) : undefined,
      );
      if (result.kind === 'totp_required') return json(202, TOTP_REQUIRED);
      return json(200, result.pair, NO_STORE);
    },
  });
}

async function principalOf(ctx: { em: Parameters<typeof findPrincipal>[0]; caller: Parameters<typeof asSession>[0] }) {
  const caller = asSession(ctx.caller);
  const type: PrincipalType = caller.kind === 'user' ? 'user' : 'customer';
  const id = caller.kind === 'user' ? caller.userId : caller.customerId;
  const principal = await findPrincipal(ctx.em, type, id);
  if (!principal) throw errors.unauthenticated();
  return { caller, type, principal };
}

export const authRoutes: RouteSpec[] = [
  loginRoute('/api/admin/users/login', 'user', 'Staff'),
  loginRoute('/api/customer/login', 'customer', 'Customer'),
  defineRoute({
    method: 'post',
    path: '/auth/refresh',
    operationId: 'refreshTokens',
    summary: 'Exchange a refresh token for a new pair',
    description:
      'Each refresh token works once. Presenting one that was already used revokes its whole session (reuse detection).',
    tags: ['auth'],
    access: { kind: 'public' },
    body: z.object({ refresh_token: z.string().min(1).max(512) }),
    responses: {
      200: { description: 'New token pair', schema: TokenPairSchema },
      401: { description: 'Invalid, expired or reused' },
    },
    handler: async ({ body, em, services }) =>
      json(200, await refreshSession(em, services.identity, body.refresh_token), NO_STORE),
  }),
  defineRoute({
    method: 'get',
    path: '/auth/sessions',
    operationId: 'listSessions',
    summary: "The caller's live sessions",
    tags: ['auth'],
    access: { kind: 'session' },
    responses: { 200: { description: 'Sessions, newest first', schema: z.object({ items: z.array(SessionSchema) }) } },
    handler: async (ctx) => {
      const { caller, type, principal } = await principalOf(ctx);
      return json(200, await listSessions(ctx.em, type, principal.id, caller.sessionId));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/auth/sessions/{session_id}',
    operationId: 'revokeSession',
    summary: 'Revoke one of your sessions',
    description: 'The very next request with any token of that session gets 401. Another principal’s session is 404.',
    tags: ['auth'],
    access: { kind: 'session' },
    params: z.object({ session_id: z.uuid() }),
    responses: { 204: { description: 'Revoked' }, 404: { description: 'No such session of yours' } },
    handler: async (ctx) => {
      const { type, principal } = await principalOf(ctx);
      await revokeOwnSession(ctx.em, ctx.services.identity, type, principal.id, ctx.params.session_id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/auth/totp/setup',
    operationId: 'setUpTotp',
    summary: 'Start TOTP enrolment',
    tags: ['auth'],
    access: { kind: 'session' },
    responses: {
      200: { description: 'Secret and otpauth URL', schema: TotpSetupSchema },
    },
    handler: async (ctx) => {
      const { principal } = await principalOf(ctx);
      return json(200, await setupTotp(ctx.em, ctx.services.identity, principal));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/auth/totp/enable',
    operationId: 'enableTotp',
    summary: 'Turn TOTP on with a code; returns ten backup codes once',
    tags: ['auth'],
    access: { kind: 'session' },
    body: CodeBody,
    responses: { 200: { description: 'Backup codes, shown once', schema: BackupCodesSchema } },
    handler: async (ctx) => {
      const { type, principal } = await principalOf(ctx);
      return json(200, await enableTotp(ctx.em, ctx.services.identity, type, principal, ctx.body.code));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/auth/totp/disable',
    operationId: 'disableTotp',
    summary: 'Turn TOTP off with a current code or a backup code',
    tags: ['auth'],
    access: { kind: 'session' },
    body: CodeBody,
    responses: { 204: { description: 'Disabled' } },
    handler: async (ctx) => {
      const { type, principal } = await principalOf(ctx);
      await disableTotp(ctx.em, ctx.services.identity, type, principal, ctx.body.code);
      return { status: 204 };
    },
  }),
];
