import { MAIL_BATCH_SIZE, sendMailBatch } from '../domain/mail/send-queued-mail';
import { SEND_MAIL_FIRST_RETRY_MS, SendMailJob } from '../jobs/send-mail.job';
import { defineProcessor } from './processor';

/** Sends the job's mail row with a batch of others, each at most once (see sendMailBatch). */
export const sendMailProcessor = defineProcessor(SendMailJob, async ({ mail_id }, { em, services, isLastAttempt }) =>
  sendMailBatch(
    em,
    {
      secrets: services.mailSecrets,
      renderer: services.mailRenderer,
      transport: services.mail,
      from: services.config.mailFrom,
      maxAttempts: SendMailJob.options.attempts,
      backoffMs: SEND_MAIL_FIRST_RETRY_MS,
      batchSize: MAIL_BATCH_SIZE,
      retryLater: async (id, delayMs) => {
        await services.jobs.ensureQueued(SendMailJob, { mail_id: id }, { delay: delayMs });
      },
    },
    { mailId: mail_id, claim: SendMailJob.jobId!({ mail_id }), isLastAttempt },
  ),
);
