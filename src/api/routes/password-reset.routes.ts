import { z } from 'zod';
import {
  confirmPasswordReset,
  RESET_MAIL_INTERVAL_SECONDS,
  RESET_REQUESTED,
  RESET_TOKEN_TTL_SECONDS,
  requestPasswordReset,
  ResetRequestedSchema,
} from '../../domain/identity/password-reset';
import { RESET_LIMITS } from '../../domain/identity/reset-limits';
import { defineRoute, json, type RouteSpec } from '../http/route';

export const passwordResetRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/customers/password-reset/forgot',
    operationId: 'forgotPassword',
    summary: 'Ask for a password-reset mail',
    description:
      'Always 202 with the same body, whether or not a customer uses the email (no account enumeration). The ' +
      'request only applies the throttle and queues a job, the same for every email, so its time tells nothing ' +
      "either; the job looks the customer up and, for an active one, queues a `password_reset` mail in the customer's " +
      `locale. Its link carries a single-use token valid ${RESET_TOKEN_TTL_SECONDS / 60} minutes (stored only as a ` +
      'hash), for `POST /customers/password-reset/confirm`. At most one mail per customer every ' +
      `${RESET_MAIL_INTERVAL_SECONDS / 60} minutes: a request inside that window is answered the same and sends ` +
      `nothing new. Requests are throttled per email from one client address (${RESET_LIMITS.emailPerAddress} an ` +
      `hour) and per client address (${RESET_LIMITS.address} an hour), counted for every email, known or not: 429 ` +
      '`RATE_LIMITED` with `Retry-After`. Another address is never throttled for an email by these counts.',
    tags: ['password reset'],
    access: { kind: 'public' },
    body: z.object({ email: z.string().min(1).max(320) }),
    responses: {
      202: { description: 'Accepted (whether or not the email is known)', schema: ResetRequestedSchema },
      429: { description: 'Too many reset requests for this email from this address, or from this address' },
    },
    handler: async ({ body, services, req }) => {
      await requestPasswordReset(services, body.email, req.clientIp);
      return json(202, RESET_REQUESTED);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/customers/password-reset/confirm',
    operationId: 'confirmPasswordReset',
    summary: 'Choose a new password with the token of a reset mail',
    description:
      'Sets the password (the policy of every password: 10 to 256 characters, not easy to guess; 422 at ' +
      '`new_password`, and the token stays usable), consumes every outstanding reset token of the customer and ' +
      'revokes all of its sessions: every token issued before gets 401. A token that is unknown, expired or used ' +
      'is 422 at `token`.',
    tags: ['password reset'],
    access: { kind: 'public' },
    body: z.object({ token: z.string().min(1).max(256), new_password: z.string().min(10).max(256) }),
    responses: {
      204: { description: 'The password is set; every session of the customer is revoked' },
    },
    handler: async ({ body, em, services }) => {
      await confirmPasswordReset(em, services.identity, body);
      return { status: 204 };
    },
  }),
];
