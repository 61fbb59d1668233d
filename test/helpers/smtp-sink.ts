import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  /** When its DATA ended (ms since the epoch). */
  at?: number;
}

/** What the sink answers to a message: undefined accepts it (250), otherwise this reply. */
export type SinkReply = { code: number; message: string } | undefined;

export interface SmtpSinkOptions {
  /** Holds each message this long before accepting it. */
  delayMs?: number;
  /**
   * Decides the answer once a message's DATA has fully arrived (it may wait first, to hold a
   * send in flight). Only accepted messages are added to `received`; `offered` has them all.
   */
  reply?: (mail: ReceivedMail) => SinkReply | Promise<SinkReply>;
}

export interface SmtpSink {
  url: string;
  received: ReceivedMail[];
  /** Every message whose DATA arrived, accepted or not. */
  offered: ReceivedMail[];
  /** Resolves when a message's DATA starts arriving (the send is in flight). */
  dataStarted: Promise<void>;
  close(): Promise<void>;
}

/** A real SMTP listener on loopback. */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const offered: ReceivedMail[] = [];
  let markStarted!: () => void;
  const dataStarted = new Promise<void>((resolve) => {
    markStarted = resolve;
  });
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      markStarted();
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const mail: ReceivedMail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        offered.push(mail);
        setTimeout(async () => {
          const answer = options.reply ? await options.reply(mail) : undefined;
          if (answer) {
            const err = new Error(answer.message) as Error & { responseCode: number };
            err.responseCode = answer.code;
            callback(err);
            return;
          }
          received.push(mail);
          callback();
        }, options.delayMs ?? 0);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    received,
    offered,
    dataStarted,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The Message-ID a worker gives the mail of a `mail_messages` row. */
export const messageIdOf = (raw: string) => /Message-ID: <([^@>]+)@trading-api>/i.exec(raw)?.[1];
