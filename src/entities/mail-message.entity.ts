import { Entity, Enum, Index, Property } from '@mikro-orm/core';
import { BaseEntity } from './base.entity';

export type MailStatus = 'queued' | 'sent' | 'logged' | 'failed';

/**
 * Every mail the service sends is first a row here (the outbox): the send-mail job carries
 * only this id, and the row records what happened. Without SMTP_URL a mail is "logged":
 * kept here and written to the log, never sent.
 */
@Entity({ tableName: 'mail_messages' })
@Index({ properties: ['status', 'createdAt'] })
export class MailMessage extends BaseEntity<'status' | 'attempts'> {
  /** What the mail is for (password_reset, withdrawal_requested, ...): for operators and tests. */
  @Property({ type: 'string', length: 64 })
  kind!: string;

  @Property({ type: 'string', length: 320 })
  toAddress!: string;

  @Property({ type: 'string', length: 998 })
  subject!: string;

  @Property({ type: 'text' })
  textBody!: string;

  @Property({ type: 'text', nullable: true })
  htmlBody?: string | null;

  @Enum({ items: ['queued', 'sent', 'logged', 'failed'], type: 'string' })
  status: MailStatus = 'queued';

  @Property({ type: 'integer' })
  attempts = 0;

  @Property({ type: 'string', length: 998, nullable: true })
  providerMessageId?: string | null;

  @Property({ type: 'text', nullable: true })
  lastError?: string | null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  sentAt?: Date | null;
}
