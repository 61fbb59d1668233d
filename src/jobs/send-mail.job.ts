import { z } from 'zod';
import { defineJob, retryPolicy } from './job-definition';
import { QUEUES } from './queues';

/** Sends one stored mail_messages row. The payload is only its id: no addresses or bodies in Redis. */
export const SendMailJob = defineJob({
  name: 'send-mail',
  queue: QUEUES.mail,
  schema: z.object({ mail_id: z.uuid() }),
  options: retryPolicy(8, 2000),
  jobId: (p) => `mail-${p.mail_id}`,
});
