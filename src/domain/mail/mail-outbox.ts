import type { EntityManager } from '@mikro-orm/postgresql';
import { MailMessage } from '../../entities/mail-message.entity';
import type { JobProducer } from '../../jobs/job-producer';
import { SendMailJob } from '../../jobs/send-mail.job';

export interface MailRequest {
  kind: string;
  to: string;
  subject: string;
  text: string;
  html?: string | null;
}

/**
 * Records a mail in the caller's unit of work. The row is the outbox: call `dispatchMail`
 * only after the transaction that wrote it has committed.
 */
export function recordMail(em: EntityManager, request: MailRequest): MailMessage {
  const mail = em.create(MailMessage, {
    kind: request.kind,
    toAddress: request.to,
    subject: request.subject,
    textBody: request.text,
    htmlBody: request.html ?? null,
  });
  em.persist(mail);
  return mail;
}

/** Hands a committed mail row to the send-mail job (the job id makes a second call harmless). */
export async function dispatchMail(jobs: JobProducer, mail: MailMessage): Promise<void> {
  await jobs.enqueue(SendMailJob, { mail_id: mail.id });
}
