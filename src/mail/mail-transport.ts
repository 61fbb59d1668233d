import nodemailer, { type Transporter } from 'nodemailer';
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
  /** `sent` went out over SMTP; `logged` means no SMTP_URL is configured. */
  send(mail: OutgoingMail): Promise<{ outcome: 'sent' | 'logged'; providerMessageId: string | null }>;
  close(): void;
}

/** SMTP through nodemailer when SMTP_URL is set; otherwise mail only reaches the log. */
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
  const transporter: Transporter = nodemailer.createTransport(smtpUrl, {
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
  });
  return {
    async send(mail) {
      const info = await transporter.sendMail({
        from: mail.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html ?? undefined,
        messageId: mail.messageId,
      });
      return { outcome: 'sent', providerMessageId: info.messageId ?? mail.messageId };
    },
    close() {
      transporter.close();
    },
  };
}
