import { UnrecoverableError } from 'bullmq';
import type { EntityManager } from '@mikro-orm/postgresql';
import { MailMessage } from '../entities/mail-message.entity';
import { MailTemplateError, type RenderedMail } from '../domain/mail/renderer';
import { SendMailJob } from '../jobs/send-mail.job';
import type { SecretBox } from '../platform/crypto';
import { defineProcessor } from './processor';

/** Tries over a row's whole life, across jobs the relay re-adds: a mail that keeps failing (or killing its worker) ends. */
const MAX_ATTEMPTS = SendMailJob.options.attempts;

/**
 * Renders one mail row from its template, locale, data and sealed secrets, sends it, and
 * records the outcome. Idempotent: a row that is not `queued` is left alone, so a job that
 * runs twice (at-least-once delivery, a re-added job) does not mail twice. The narrow window
 * of an SMTP success followed by a crash before the row is updated can still repeat a mail;
 * the fixed Message-ID lets mail servers and clients drop such a duplicate. Once the mail is
 * sent, logged or failed for good, its secrets are erased; the subject is kept only when no
 * secret value appears in it.
 */
export const sendMailProcessor = defineProcessor(SendMailJob, async ({ mail_id }, { em, services, isLastAttempt }) => {
  const mail = await em.findOne(MailMessage, mail_id);
  if (!mail) throw new UnrecoverableError(`mail ${mail_id} does not exist`);
  if (mail.status !== 'queued') return { status: mail.status, skipped: true };

  // Counted before trying, so a crash in the middle counts too.
  mail.attempts += 1;
  await em.flush();
  if (mail.attempts > MAX_ATTEMPTS) return giveUp(em, mail, `gave up after ${MAX_ATTEMPTS} attempts`);

  let secrets: Record<string, string>;
  let rendered: RenderedMail;
  try {
    secrets = mail.secretData ? openSecrets(services.mailSecrets, mail.secretData) : {};
    rendered = await services.mailRenderer.render(em, { template: mail.template, locale: mail.locale, data: mail.data, secrets });
  } catch (err) {
    // Retrying cannot make a template appear or a sealed value open under another key.
    if (err instanceof MailTemplateError || err instanceof SealedSecretsError) return giveUp(em, mail, err.message);
    throw err;
  }

  try {
    const result = await services.mail.send({
      from: services.config.mailFrom,
      to: mail.toAddress,
      subject: rendered.subject,
      text: rendered.text,
      html: rendered.html,
      messageId: `<${mail.id}@trading-api>`,
    });
    mail.status = result.outcome;
    mail.providerMessageId = result.providerMessageId;
    mail.sentAt = new Date();
    mail.lastError = null;
    mail.secretData = null;
    mail.subject = Object.values(secrets).some((v) => rendered.subject.includes(v)) ? null : rendered.subject;
  } catch (err) {
    mail.lastError = err instanceof Error ? err.message : String(err);
    if (isLastAttempt || mail.attempts >= MAX_ATTEMPTS) return giveUp(em, mail, mail.lastError);
    await em.flush();
    throw err;
  }
  await em.flush();
  return { status: mail.status };
});

/** Failed for good: the secrets go, and the job is not retried. */
async function giveUp(em: EntityManager, mail: MailMessage, reason: string): Promise<never> {
  mail.status = 'failed';
  mail.lastError = reason;
  mail.secretData = null;
  await em.flush();
  throw new UnrecoverableError(reason);
}

class SealedSecretsError extends Error {}

function openSecrets(box: SecretBox, sealed: string): Record<string, string> {
  try {
    return JSON.parse(box.open(sealed)) as Record<string, string>;
  } catch {
    throw new SealedSecretsError('the mail secrets cannot be opened (JWT_SECRET differs from the one that sealed them)');
  }
}
