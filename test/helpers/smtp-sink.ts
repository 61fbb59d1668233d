import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface SmtpSink {
  url: string;
  received: ReceivedMail[];
  /** Resolves when a message's DATA starts arriving (the send is in flight). */
  dataStarted: Promise<void>;
  close(): Promise<void>;
}

/** A real SMTP listener on loopback; `delayMs` holds each message before accepting it. */
export async function startSmtpSink(options: { delayMs?: number } = {}): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
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
        setTimeout(() => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
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
    dataStarted,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
