import { z } from 'zod';
import { defineJob, retryPolicy } from './job-definition';
import { QUEUES } from './queues';

/** The first retry's delay; each later one doubles it (exponential backoff). */
export const SEND_MAIL_FIRST_RETRY_MS = 2000;

/**
 * Sends one stored mail_messages row, with a batch of other rows not tried yet (see
 * domain/mail/send-queued-mail.ts). The payload is only its id: no addresses or bodies in Redis.
 */
export const SendMailJob = defineJob({
  name: 'send-mail',
  queue: QUEUES.mail,
  schema: z.object({ mail_id: z.uuid() }),
  options: retryPolicy(8, SEND_MAIL_FIRST_RETRY_MS),
  jobId: (p) => `mail-${p.mail_id}`,
});
