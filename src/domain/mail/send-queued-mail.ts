import type { EntityManager } from '@mikro-orm/postgresql';
import { MailMessage } from '../../entities/mail-message.entity';
import { MailSendError, type MailTransport } from '../../mail/mail-transport';
import { PermanentJobFailure } from '../../platform/errors';
import { UnsealError, type SecretBox } from '../../platform/secret-box';
import { CLAIM_FOR_SENDING } from './mail.queries';
import { MailTemplateError, type MailRenderer, type RenderedMail } from './renderer';

export const UNKNOWN_OUTCOME =
  'the worker stopped while sending: the server may have the mail, so it is not sent again (at most once)';

export interface MailSending {
  secrets: SecretBox;
  renderer: MailRenderer;
  transport: MailTransport;
  from: string;
  /** Tries over a row's whole life, across the send jobs the relay re-adds: a mail that keeps failing ends. */
  maxAttempts: number;
}

/** What one send did with the row. */
export type MailSendOutcome = { status: MailMessage['status']; skipped?: true } | { skipped: true };

/**
 * Renders one mail row from its template, locale, data and sealed secrets, sends it, and
 * records the outcome. The guarantee: a mail is handed to the SMTP server at most once.
 * - A row that is not `queued` is never sent: a job that runs twice (at-least-once delivery,
 *   a re-added job) does not mail twice.
 * - Just before the hand-off the row is claimed (`queued` to `sending`, attempts + 1) by a
 *   conditional update that commits on its own; only recording the outcome leaves `sending`.
 *   A worker that dies between sending and recording leaves the row `sending`; the job's retry
 *   after the stall (or the relay's sweep, for a job lost with it) marks it `unknown` and sends
 *   nothing, because the server may already have the mail.
 * - A temporary failure (4xx, refused connection, timeout) puts the row back to `queued` and
 *   throws, so the job retries with exponential backoff; a permanent one (5xx) is recorded
 *   `failed` at once and never retried; a template that cannot render, or secrets no
 *   configured key opens, fail at once too. On the job's last attempt, or after `maxAttempts`
 *   over the row's life, the row is `failed`. A failure recorded `failed` throws
 *   PermanentJobFailure: no retry follows.
 * Once the mail is final its secrets are erased; the subject is kept only when no secret value
 * appears in it.
 */
export async function sendQueuedMail(
  em: EntityManager,
  sending: MailSending,
  mailId: string,
  isLastAttempt: boolean,
): Promise<MailSendOutcome> {
  const mail = await em.findOne(MailMessage, mailId);
  if (!mail) throw new PermanentJobFailure(`mail ${mailId} does not exist`);
  if (mail.status === 'sending') {
    // Our own earlier run died mid-send (this is its retry after the stall).
    mail.status = 'unknown';
    mail.lastError = UNKNOWN_OUTCOME;
    mail.secretData = null;
    await em.flush();
    return { status: mail.status };
  }
  if (mail.status !== 'queued') return { status: mail.status, skipped: true };
  if (mail.attempts >= sending.maxAttempts) return giveUp(em, mail, `gave up after ${sending.maxAttempts} attempts`);

  let secrets: Record<string, string>;
  let rendered: RenderedMail;
  try {
    secrets = mail.secretData
      ? (JSON.parse(sending.secrets.open(mail.secretData, `the secret values of mail ${mail.id}`)) as Record<string, string>)
      : {};
    rendered = await sending.renderer.render(em, { template: mail.template, locale: mail.locale, data: mail.data, secrets });
  } catch (err) {
    // Retrying cannot make a template appear or a sealed value open under a key this process lacks.
    if (err instanceof MailTemplateError || err instanceof UnsealError) {
      mail.attempts += 1;
      return giveUp(em, mail, err instanceof UnsealError ? `${err.name}: ${err.message}` : err.message);
    }
    throw err;
  }

  // The claim commits before the hand-off: from here on a crash leaves the row `sending`.
  const claim = CLAIM_FOR_SENDING.bind({ mail_id: mail.id });
  const claimed = await em.execute<Array<{ attempts: number }>>(claim.sql, claim.values);
  if (claimed.length === 0) return { skipped: true };
  // Read back, not assigned: the unit of work must see `sending` as the row's state, or putting
  // it back to `queued` after a temporary failure would look like no change and not be written.
  await em.refresh(mail);

  try {
    const result = await sending.transport.send({
      from: sending.from,
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
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof MailSendError && err.permanent) return giveUp(em, mail, message);
    if (isLastAttempt || mail.attempts >= sending.maxAttempts) return giveUp(em, mail, message);
    // Not handed over: the row may be tried again.
    mail.status = 'queued';
    mail.lastError = message;
    await em.flush();
    throw err;
  }
  await em.flush();
  return { status: mail.status };
}

/** Failed for good: the secrets go, and no retry follows. */
async function giveUp(em: EntityManager, mail: MailMessage, reason: string): Promise<never> {
  mail.status = 'failed';
  mail.lastError = reason;
  mail.secretData = null;
  await em.flush();
  throw new PermanentJobFailure(reason);
}
