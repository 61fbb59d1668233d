import { Entity, Enum, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/**
 * `queued` waits for a send; `sending` is committed (by a batch claim) before the SMTP hand-off
 * and left only by recording the outcome; `unknown` is a row found still `sending` after its worker died (the
 * server may or may not have the mail, so it is never sent again); `sent`, `logged`, `failed`
 * and `unknown` are final.
 */
export const MAIL_STATUSES = ['queued', 'sending', 'sent', 'logged', 'failed', 'unknown'] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];

/**
 * Every mail the service sends is first a row here (the outbox): the send-mail job carries
 * only this id, and the worker renders the mail from the template key, locale and data at
 * send time. No body is ever stored. Secret values (a reset link) travel sealed in
 * `secretData` (AES-256-GCM, see domain/mail/mail-outbox.ts) and are erased once the mail
 * is sent or has failed for good. Without SMTP_URL a mail is "logged": recorded here and
 * written to the log (address and subject only), never sent.
 */
@Entity({ tableName: 'mail_messages' })
@Index({
  name: 'mail_messages_queued_index',
  expression: `create index "mail_messages_queued_index" on "mail_messages" ("updated_at") where "status" = 'queued'`,
})
@Index({
  name: 'mail_messages_sending_index',
  expression: `create index "mail_messages_sending_index" on "mail_messages" ("updated_at") where "status" = 'sending'`,
})
export class MailMessage extends BaseEntity<
  'status' | 'attempts' | 'secretData' | 'subject' | 'providerMessageId' | 'lastError' | 'sentAt' | 'claimedBy'
> {
  /** The template key (password_reset, ...): what the mail is for. */
  @Property({ type: 'string', length: 64 })
  template!: string;

  /** The locale asked for (BCP 47, `de-AT`); the renderer falls back from it. */
  @Property({ type: 'string', length: 35 })
  locale!: string;

  @Property({ type: 'string', length: 320 })
  toAddress!: string;

  /** What the template needs to render, without secrets. */
  @Property({ type: 'json' })
  data!: Record<string, unknown>;

  /** Secret template values, sealed (`v2:<key id>:<iv>:<ciphertext>`, platform/secret-box.ts); null once the mail is final. */
  @Property({ type: 'text', nullable: true })
  secretData?: string | null = null;

  /** The subject as rendered at send time, kept for operators only when it carries no secret value. */
  @Property({ type: 'string', length: 998, nullable: true })
  subject?: string | null = null;

  @Enum({ items: [...MAIL_STATUSES], type: 'string' })
  status: MailStatus = 'queued';

  /** Send attempts over the row's whole life, counted before each try (a crash mid-send counts). */
  @Property({ type: 'integer' })
  attempts = 0;

  @Property({ type: 'string', length: 998, nullable: true })
  providerMessageId?: string | null = null;

  @Property({ type: 'text', nullable: true })
  lastError?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  sentAt?: Date | null = null;

  /**
   * The send run (its job id) that last claimed the row, kept after the outcome: a row still
   * `sending` under a run's id when that run starts again was left by its own dead attempt.
   */
  @Property({ type: 'string', length: 64, nullable: true })
  claimedBy?: string | null = null;
}
