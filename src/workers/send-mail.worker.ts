import { sendQueuedMail } from '../domain/mail/send-queued-mail';
import { SendMailJob } from '../jobs/send-mail.job';
import { defineProcessor } from './processor';

/** Sends one mail row at most once (see sendQueuedMail). */
export const sendMailProcessor = defineProcessor(SendMailJob, async ({ mail_id }, { em, services, isLastAttempt }) =>
  sendQueuedMail(
    em,
    {
      secrets: services.mailSecrets,
      renderer: services.mailRenderer,
      transport: services.mail,
      from: services.config.mailFrom,
      maxAttempts: SendMailJob.options.attempts,
    },
    mail_id,
    isLastAttempt,
  ),
);
