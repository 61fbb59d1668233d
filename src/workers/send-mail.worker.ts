import { UnrecoverableError } from 'bullmq';
import { MailMessage } from '../entities/mail-message.entity';
import { SendMailJob } from '../jobs/send-mail.job';
import { defineProcessor } from './processor';

/**
 * Sends one mail row. Idempotent: a row already sent or logged is left alone, so a job
 * that runs twice (at-least-once delivery) does not mail twice. The narrow window of an
 * SMTP success followed by a crash before the row is updated can still repeat a mail; the
 * fixed Message-ID lets mail servers and clients drop such a duplicate.
 */
export const sendMailProcessor = defineProcessor(SendMailJob, async ({ mail_id }, { em, services, job, isLastAttempt }) => {
  const mail = await em.findOne(MailMessage, mail_id);
  if (!mail) throw new UnrecoverableError(`mail ${mail_id} does not exist`);
  if (mail.status !== 'queued') return { status: mail.status, skipped: true };

  mail.attempts = job.attemptsMade + 1;
  try {
    const result = await services.mail.send({
      from: services.config.mailFrom,
      to: mail.toAddress,
      subject: mail.subject,
      text: mail.textBody,
      html: mail.htmlBody,
      messageId: `<${mail.id}@trading-api>`,
    });
    mail.status = result.outcome;
    mail.providerMessageId = result.providerMessageId;
    mail.sentAt = new Date();
    mail.lastError = null;
  } catch (err) {
    mail.lastError = err instanceof Error ? err.message : String(err);
    if (isLastAttempt) mail.status = 'failed';
    await em.flush();
    throw err;
  }
  await em.flush();
  return { status: mail.status };
});
