import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { MailMessage } from '../../entities/mail-message.entity';
import type { JobProducer } from '../../jobs/job-producer';
import { SendMailJob } from '../../jobs/send-mail.job';
import { AppError } from '../../platform/errors';
import type { SecretBox } from '../../platform/secret-box';
import { Locale, TemplateKey } from './email-templates';
import { SECRET_PLACEHOLDER_NAMES } from './secret-placeholders';
import { executeNamed } from '../../db/bound-statement';
import { MARK_SENDING_ORPHANS, TOUCH_STALE_QUEUED } from './mail.queries';

export const QueueMailSchema = z.object({
  template: TemplateKey,
  locale: Locale.default('en'),
  to: z.email().max(320),
  /** Template values kept readable in `mail_messages.data`: no secrets. */
  data: z.record(z.string(), z.unknown()).default({}),
  /**
   * Template values for the body only, sealed at rest and erased once the mail is final (a
   * reset link). Only the names templates are checked against may carry a secret.
   */
  secretData: z.partialRecord(z.enum(SECRET_PLACEHOLDER_NAMES), z.string().min(1)).optional(),
});

export type QueueMailRequest = z.input<typeof QueueMailSchema>;

/**
 * Records a mail in the caller's unit of work, so it commits with the change that causes it
 * (the mail row is the outbox): template key, locale, recipient and data, with `secretData`
 * sealed (AES-256-GCM under DATA_ENCRYPTION_KEYS, its own subkey). After the commit,
 * `dispatchMail` adds its send job; if that never happens (a crash, Redis down), the outbox
 * relay re-adds it after MAIL_REQUEUE_AFTER_SECONDS. Nothing rendered is stored here: the
 * send-mail worker renders at send time.
 */
export function queueMail(em: EntityManager, secrets: SecretBox, request: QueueMailRequest): MailMessage {
  const r = QueueMailSchema.parse(request);
  const secretValues = Object.entries(r.secretData ?? {});
  const dataText = JSON.stringify(r.data);
  for (const [key, value] of secretValues) {
    // A programming error, caught before anything is stored: a secret must not leak into the readable data.
    if (key in r.data) throw new Error(`mail secret "${key}" is also a data key`);
    if (dataText.includes(value)) throw new Error(`the value of mail secret "${key}" appears in the mail data`);
  }
  const mail = em.create(MailMessage, {
    template: r.template,
    locale: r.locale,
    toAddress: r.to,
    data: r.data,
    secretData: secretValues.length ? secrets.seal(JSON.stringify(r.secretData)) : null,
  });
  em.persist(mail);
  return mail;
}

/**
 * After the transaction that wrote the row has committed: adds its send job (the job id
 * makes a second call harmless). Never fails for the queue's sake, since the row is already
 * committed: when Redis cannot take the job, it answers false and the relay re-adds it.
 */
export async function dispatchMail(jobs: JobProducer, mail: MailMessage): Promise<boolean> {
  try {
    await jobs.enqueue(SendMailJob, { mail_id: mail.id });
    return true;
  } catch (err) {
    if (err instanceof AppError) return false;
    throw err;
  }
}

/**
 * A row still `sending` this long after its claim has lost its worker and its job with it (a
 * job that survives is retried after the stall and settles the row itself): every timeout of
 * a send is far shorter.
 */
export const SENDING_ORPHAN_SECONDS = 600;

/**
 * The relay's safety net for mail: rows still `queued` and untouched for `afterSeconds`
 * (committed but never enqueued, or whose job was lost or finished without settling the row)
 * get their send job again. Claimed with SKIP LOCKED and touched in the same statement, so
 * racing relays take different rows and a row is looked at once per `afterSeconds`. A job
 * still waiting, delayed or running is left alone; a finished one is replaced. The send
 * worker skips a row that is not `queued`, so a job too many sends nothing. Rows left
 * `sending` for SENDING_ORPHAN_SECONDS become `unknown` (never sent again: at most once).
 */
export async function requeueStaleMail(
  em: EntityManager,
  jobs: JobProducer,
  options: { afterSeconds: number; limit: number },
): Promise<{ checked: number; requeued: number; orphaned: number }> {
  const orphans = await executeNamed<{ id: string }>(
    em,
    MARK_SENDING_ORPHANS.bind({ after_seconds: SENDING_ORPHAN_SECONDS, limit: options.limit }),
  );
  const rows = await executeNamed<{ id: string }>(
    em,
    TOUCH_STALE_QUEUED.bind({ after_seconds: options.afterSeconds, limit: options.limit }),
  );
  const outcomes = await Promise.all(rows.map((r) => jobs.ensureQueued(SendMailJob, { mail_id: r.id })));
  return { checked: rows.length, requeued: outcomes.filter((o) => o !== 'present').length, orphaned: orphans.length };
}
