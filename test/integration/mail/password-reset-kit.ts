import { QUEUES } from '../../../src/jobs/queues';
import { decodedMessage } from '../../helpers/mail';
import type { SmtpSink } from '../../helpers/smtp-sink';
import { waitFor, type TestApp, type TestResponse } from '../../helpers/test-app';

/** Shared by the password-reset test files (not a test file itself: jest matches *.test.ts only). */

export const RESET_URL = 'https://portal.broker.test/reset';

let addressCounter = 0;
/**
 * A client address of its own (198.18.0.0/15, not private, so express takes it from
 * X-Forwarded-For as the client's), so throttle counters never leak between requests that
 * are not meant to share them.
 */
export function newAddress(): string {
  const n = addressCounter++;
  return `198.18.${Math.floor(n / 250)}.${(n % 250) + 1}`;
}

export function forgot(app: TestApp, email: string, address: string): Promise<TestResponse> {
  return app.request('POST', '/customers/password-reset/forgot', { body: { email }, headers: { 'x-forwarded-for': address } });
}

/**
 * Waits until the mail queue has nothing waiting, delayed or running: every reset job added
 * so far has run, and so has every send job it added. A 202 is answered only after its job
 * is in the queue, so nothing is missed.
 */
export async function mailQueueIdle(app: TestApp, timeoutMs = 20_000): Promise<void> {
  const queue = app.runtime.services.jobs.queue(QUEUES.mail);
  await waitFor(
    'the mail queue to be idle',
    async () => {
      const counts = await queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized', 'waiting-children');
      return Object.values(counts).every((n) => n === 0);
    },
    timeoutMs,
  );
}

export function mailsTo(smtp: SmtpSink, email: string) {
  return smtp.received.filter((m) => m.to.includes(email));
}

/** Waits for the n-th reset mail to `email` and returns the token of its link. */
export async function tokenFromMail(smtp: SmtpSink, email: string, n = 1): Promise<string> {
  const mail = await waitFor(`reset mail ${n} to ${email}`, async () => mailsTo(smtp, email)[n - 1]);
  const text = decodedMessage(mail.raw);
  const match = /https:\/\/portal\.broker\.test\/reset\?token=([A-Za-z0-9_-]+)/.exec(text);
  if (!match) throw new Error(`no reset link in ${text}`);
  return match[1]!;
}
