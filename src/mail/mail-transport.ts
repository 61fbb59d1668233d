import nodemailer, { type Transporter } from 'nodemailer';
import { parseConnectionUrl } from 'nodemailer/lib/shared';
import type SMTPPool from 'nodemailer/lib/smtp-pool';
import type { Logger } from 'pino';

export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string | null;
  /** Becomes the Message-ID header, so a retried send is recognisable downstream. */
  messageId: string;
}

export interface MailTransport {
  /** `sent` went out over SMTP; `logged` means no SMTP_URL is configured. Throws MailSendError. */
  send(mail: OutgoingMail): Promise<{ outcome: 'sent' | 'logged'; providerMessageId: string | null }>;
  close(): void;
}

/**
 * A send that failed. `permanent`: the server refused it for good (an SMTP 5xx reply), and
 * trying again would be refused the same way. Everything else is temporary: a 4xx reply
 * (451, greylisting), a refused or dropped connection, a timeout.
 */
export class MailSendError extends Error {
  override readonly name = 'MailSendError';
  constructor(
    message: string,
    readonly permanent: boolean,
    readonly responseCode: number | undefined,
  ) {
    super(message);
  }
}

/** nodemailer's error as a MailSendError: permanent only on an SMTP 5xx reply. */
export function classifySendError(err: unknown): MailSendError {
  const e = err as { message?: string; responseCode?: unknown; code?: unknown };
  const responseCode = typeof e?.responseCode === 'number' ? e.responseCode : undefined;
  const permanent = responseCode !== undefined && responseCode >= 500 && responseCode < 600;
  const code = typeof e?.code === 'string' ? `${e.code}: ` : '';
  return new MailSendError(`${code}${e?.message ?? String(err)}`.slice(0, 2000), permanent, responseCode);
}

/** SMTP connections kept open and shared by the sends of one process. */
export const SMTP_POOL = { maxConnections: 5, maxMessages: 1000 } as const;

/**
 * SMTP through nodemailer when SMTP_URL is set, over a pooled transport (connections are
 * opened once and reused, up to SMTP_POOL.maxConnections at a time); otherwise mail only
 * reaches the log. Query parameters of SMTP_URL (`?tls.rejectUnauthorized=false`) still apply.
 */
export function createMailTransport(smtpUrl: string | undefined, logger: Logger): MailTransport {
  if (!smtpUrl) {
    return {
      async send(mail) {
        // Addresses and subjects are logged, bodies are not: they may hold reset links.
        logger.info({ to: mail.to, subject: mail.subject, message_id: mail.messageId }, 'mail not sent: SMTP_URL is not set');
        return { outcome: 'logged', providerMessageId: null };
      },
      close() {},
    };
  }
  const options: SMTPPool.Options = {
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    ...parseConnectionUrl(smtpUrl),
    pool: true,
    ...SMTP_POOL,
  };
  const transporter: Transporter = nodemailer.createTransport(options);
  return {
    async send(mail) {
      try {
        const info = await transporter.sendMail({
          from: mail.from,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          html: mail.html ?? undefined,
          messageId: mail.messageId,
        });
        return { outcome: 'sent', providerMessageId: info.messageId ?? mail.messageId };
      } catch (err) {
        throw classifySendError(err);
      }
    },
    close() {
      transporter.close();
    },
  };
}
