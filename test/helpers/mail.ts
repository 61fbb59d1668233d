import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { queueMail } from '../../src/domain/mail/mail-outbox';
import { MailMessage } from '../../src/entities/mail-message.entity';
import { OutboxRelayJob } from '../../src/jobs/outbox-relay.job';
import { SendMailJob } from '../../src/jobs/send-mail.job';
import { sql, waitFor, type TestApp } from './test-app';

/**
 * A password-reset mail committed to the outbox, not yet dispatched, with a fresh secret
 * reset link (what a reset request will queue).
 */
export async function queueResetMail(
  app: TestApp,
  options: { to?: string; locale?: string } = {},
): Promise<{ mail: MailMessage; token: string; resetUrl: string }> {
  const token = randomBytes(32).toString('base64url');
  const resetUrl = `https://backoffice.broker.test/reset?token=${token}`;
  const em = app.runtime.services.orm.em.fork() as EntityManager;
  const mail = queueMail(em, app.runtime.services.mailSecrets, {
    template: 'password_reset',
    locale: options.locale ?? 'en',
    to: options.to ?? 'customer@broker.test',
    data: { first_name: 'Ada' },
    secretData: { reset_url: resetUrl },
  });
  await em.flush();
  return { mail, token, resetUrl };
}

/** Every column of a mail row as one text, for "this never appears anywhere in the row" checks. */
export async function mailRowText(app: TestApp, id: string): Promise<string> {
  const [row] = await sql<{ row: string }>(app, 'select row_to_json(m)::text as row from mail_messages m where id = ?', [id]);
  if (!row) throw new Error(`no mail_messages row ${id}`);
  return row.row;
}

/** A received message's text with quoted-printable soft breaks and escapes undone, so a long link reads whole. */
export function decodedMessage(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/**
 * Waits until the system is past every point at which a settled mail could be offered again,
 * so a check that it was not is no longer early: an outbox relay run has started more than
 * `requeueAfterSeconds` after the mail's last change (a run that would have re-added its send
 * job, were the mail still queued), and after it the send job is finished for good (no retry
 * follows, and a re-added job would have sent by then).
 */
export async function pastEveryResend(app: TestApp, mailId: string, requeueAfterSeconds: number): Promise<void> {
  const { jobs, orm } = app.runtime.services;
  const settled = await orm.em.fork().findOneOrFail(MailMessage, mailId, { refresh: true });
  const bound = settled.updatedAt.getTime() + requeueAfterSeconds * 1000;
  await waitFor(
    'an outbox relay run past the requeue bound',
    async () => {
      const runs = await jobs.queue(OutboxRelayJob.queue).getCompleted(0, 200);
      return runs.some((run) => run.name === OutboxRelayJob.name && (run.processedOn ?? 0) > bound);
    },
    20_000,
  );
  await waitFor('the send job to finish for good', async () => {
    const job = await jobs.queue(SendMailJob.queue).getJob(SendMailJob.jobId!({ mail_id: mailId }));
    const state = await job?.getState();
    return state === 'completed' || state === 'failed';
  });
}
