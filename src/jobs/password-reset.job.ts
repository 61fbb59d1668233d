import { z } from 'zod';
import { defineJob, retryPolicy } from './job-definition';
import { QUEUES } from './queues';

/**
 * One `POST /customers/password-reset/forgot` that passed the throttle, for any email: the
 * worker looks the customer up, makes the token and queues the mail, so the request does the
 * same work whether or not the email belongs to anyone. The payload is the request's own id
 * (the token's unique key, see sendPasswordReset) and the lower-cased email; never the token.
 */
export const PasswordResetJob = defineJob({
  name: 'password-reset',
  queue: QUEUES.mail,
  schema: z.object({
    request_id: z.uuid(),
    // The route takes up to 320 characters; lower-casing lengthens a few letters, so the
    // bound is looser here than there (an email this long matches no customer anyway).
    email: z.string().max(1000),
  }),
  options: {
    ...retryPolicy(5, 1000),
    // The email is personal data: a finished job leaves nothing behind in Redis.
    removeOnComplete: true,
    removeOnFail: { age: 24 * 3600 },
  },
  jobId: (p) => `reset-${p.request_id}`,
});
