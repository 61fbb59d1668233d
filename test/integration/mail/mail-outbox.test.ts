import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { dispatchMail, queueMail } from '../../../src/domain/mail/mail-outbox';
import { MailMessage } from '../../../src/entities/mail-message.entity';
import { SendMailJob } from '../../../src/jobs/send-mail.job';
import type { MailRenderer } from '../../../src/domain/mail/renderer';
import { DataKeyRing } from '../../../src/platform/secret-box';
import { sendMailProcessor } from '../../../src/workers/send-mail.worker';
import type { JobContext } from '../../../src/workers/processor';
import { decodedMessage, mailRowText, queueResetMail } from '../../helpers/mail';
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';

jest.setTimeout(60_000);

let smtp: SmtpSink;
let api: TestApp;
let worker: TestApp;

beforeAll(async () => {
  smtp = await startSmtpSink();
  // One deployment: the API tier queues mail, a worker instance renders, sends and relays.
  const env = { SMTP_URL: smtp.url, MAIL_REQUEUE_AFTER_SECONDS: '1' };
  api = await startTestApp({ label: 'mailoutbox', env: { ...env, ROLE: 'api' } });
  worker = await startTestApp({ shareWith: api, env: { ...env, ROLE: 'worker' } });
});
afterAll(async () => {
  await worker?.stop();
  await api?.stop();
  await smtp?.close();
});

const row = (id: string) => api.runtime.services.orm.em.fork().findOneOrFail(MailMessage, id, { refresh: true });
const received = (id: string) => smtp.received.filter((m) => m.raw.includes(`<${id}@trading-api>`));
const mailQueue = () => api.runtime.services.jobs.queue(SendMailJob.queue);
const jobIdOf = (id: string) => SendMailJob.jobId!({ mail_id: id });

async function settled(id: string): Promise<MailMessage> {
  return waitFor(`mail ${id} to settle`, async () => {
    const m = await row(id);
    return m.status === 'queued' || m.status === 'sending' ? undefined : m;
  });
}

test('when a reset mail is queued and sent, then its link is readable in no column before or after, and the mail carries it', async () => {
  const { mail, token, resetUrl } = await queueResetMail(api);
  const before = await mailRowText(api, mail.id);
  expect(before).not.toContain(token);
  expect(JSON.parse(before)).toMatchObject({
    template: 'password_reset',
    locale: 'en',
    data: { first_name: 'Ada' },
    status: 'queued',
    subject: null,
    secret_data: expect.stringMatching(/^v2:development:/),
  });

  expect(await dispatchMail(api.runtime.services.jobs, mail)).toBe(true);
  const sent = await settled(mail.id);
  expect(sent).toMatchObject({ status: 'sent', attempts: 1, lastError: null, secretData: null, subject: 'Reset your password' });
  expect(await mailRowText(api, mail.id)).not.toContain(token);

  const [message] = received(mail.id);
  expect(message).toMatchObject({ to: ['customer@broker.test'] });
  const text = decodedMessage(message!.raw);
  expect(text).toContain('Subject: Reset your password');
  expect(text).toContain('Hello Ada,');
  expect(text).toContain(resetUrl);
  expect(text).toContain(`href="${resetUrl}"`);
});

test('when the send job was never added (a crash between commit and enqueue), then the relay re-queues the mail and it arrives once', async () => {
  const { mail, resetUrl } = await queueResetMail(api);
  expect(await mailQueue().getJobState(jobIdOf(mail.id))).toBe('unknown');
  const sent = await settled(mail.id);
  expect(sent.status).toBe('sent');
  expect(received(mail.id)).toHaveLength(1);
  expect(decodedMessage(received(mail.id)[0]!.raw)).toContain(resetUrl);
});

test('when the send job is lost from Redis after dispatch, then the relay re-queues the mail and it arrives once', async () => {
  const queue = mailQueue();
  await queue.pause();
  const { mail } = await queueResetMail(api);
  await dispatchMail(api.runtime.services.jobs, mail);
  expect(await queue.remove(jobIdOf(mail.id))).toBe(1);
  await queue.resume();

  expect((await settled(mail.id)).status).toBe('sent');
  expect(received(mail.id)).toHaveLength(1);
});

test('when a finished job holds the mail id while the row is still queued, then the relay replaces the job and the mail arrives once', async () => {
  const { mail } = await queueResetMail(api);
  // A job under the mail's id that fails without settling the row (as a job that stalled out would).
  const broken = await mailQueue().add(SendMailJob.name, { mail_id: 'not-a-uuid' }, { jobId: jobIdOf(mail.id), attempts: 1 });
  await expect(api.runtime.services.queueEvents.waitFor(broken, 10_000)).rejects.toThrow(/invalid payload/);
  expect((await row(mail.id)).status).toBe('queued');

  expect((await settled(mail.id)).status).toBe('sent');
  expect(received(mail.id)).toHaveLength(1);
});

test('when the locale is de-AT, then the German translation is rendered and its subject kept', async () => {
  const { mail, token } = await queueResetMail(api, { locale: 'de-AT' });
  await dispatchMail(api.runtime.services.jobs, mail);
  const sent = await settled(mail.id);
  expect(sent).toMatchObject({ status: 'sent', locale: 'de-AT', subject: 'Passwort zurücksetzen' });
  expect(decodedMessage(received(mail.id)[0]!.raw)).toContain('Hallo Ada,');
  expect(await mailRowText(api, mail.id)).not.toContain(token);
});

test('when a mail cannot be rendered, then it fails at once without sending, and its secrets are erased', async () => {
  const em = api.runtime.services.orm.em.fork() as EntityManager;
  const noTemplate = queueMail(em, api.runtime.services.mailSecrets, {
    template: 'no_such_template',
    to: 'customer@broker.test',
    secretData: { reset_url: 'https://backoffice.broker.test/reset?token=unrendered' },
  });
  const noValue = queueMail(em, api.runtime.services.mailSecrets, {
    template: 'password_reset',
    to: 'customer@broker.test',
    data: {},
    secretData: { reset_url: 'https://backoffice.broker.test/reset?token=unrendered' },
  });
  await em.flush();
  for (const m of [noTemplate, noValue]) await dispatchMail(api.runtime.services.jobs, m);

  expect(await settled(noTemplate.id)).toMatchObject({
    status: 'failed',
    attempts: 1,
    secretData: null,
    lastError: 'no mail template "no_such_template"',
  });
  expect(await settled(noValue.id)).toMatchObject({
    status: 'failed',
    attempts: 1,
    secretData: null,
    lastError: 'no value for the placeholder {{first_name}}',
  });
  expect(received(noTemplate.id)).toEqual([]);
  expect(received(noValue.id)).toEqual([]);
  // No retry follows: the job failed for good, or finished at once when the other's batch took its row.
  const job = await mailQueue().getJob(jobIdOf(noTemplate.id));
  expect(['completed', 'failed']).toContain(await job!.getState());
  expect(job!.attemptsMade).toBeLessThanOrEqual(1);
});

test('when the secrets were sealed under a key this deployment does not have, then the mail fails for good without sending', async () => {
  const em = api.runtime.services.orm.em.fork() as EntityManager;
  const elsewhere = new DataKeyRing([{ id: 'elsewhere', key: randomBytes(32) }], undefined, () => undefined).box(
    'mail-secret-data',
  );
  const mail = queueMail(em, elsewhere, {
    template: 'password_reset',
    to: 'customer@broker.test',
    data: { first_name: 'Ada' },
    secretData: { reset_url: 'https://backoffice.broker.test/reset?token=sealed-elsewhere' },
  });
  await em.flush();
  await dispatchMail(api.runtime.services.jobs, mail);
  expect(await settled(mail.id)).toMatchObject({
    status: 'failed',
    secretData: null,
    lastError: expect.stringMatching(/^UnsealError: .*key id "elsewhere", which is not in DATA_ENCRYPTION_KEYS/),
  });
  expect(received(mail.id)).toEqual([]);
});

test('when a renderer (an operator-edited template, say) puts a secret in the subject, then the subject is not kept', async () => {
  const { mail, token } = await queueResetMail(api);
  const leaky: MailRenderer = {
    render: async (_em, r) => ({
      subject: `Reset: ${r.secrets.reset_url}`,
      text: r.secrets.reset_url!,
      html: null,
      locale: 'en',
    }),
  };
  const services = { ...worker.runtime.services, mailRenderer: leaky };
  const ctx = {
    job: { attemptsMade: 0, opts: { attempts: SendMailJob.options.attempts } },
    em: worker.runtime.services.orm.em.fork(),
    services,
    logger: services.logger,
    isLastAttempt: false,
  } as unknown as JobContext;
  // Held off from the worker instance meanwhile: a job the relay might add finds the row settled.
  await mailQueue().pause();
  try {
    await sendMailProcessor.handle({ mail_id: mail.id }, ctx);
  } finally {
    await mailQueue().resume();
  }

  expect(await row(mail.id)).toMatchObject({ status: 'sent', subject: null, secretData: null });
  expect(await mailRowText(api, mail.id)).not.toContain(token);
  expect(decodedMessage(received(mail.id)[0]!.raw)).toContain(token);
});

test('when a secret value is also in the readable data, then queueMail refuses before anything is stored', () => {
  const em = api.runtime.services.orm.em.fork() as EntityManager;
  const link = 'https://backoffice.broker.test/reset?token=leaky';
  const box = api.runtime.services.mailSecrets;
  expect(() =>
    queueMail(em, box, { template: 'password_reset', to: 'a@broker.test', data: { link }, secretData: { reset_url: link } }),
  ).toThrow(/appears in the mail data/);
  expect(() =>
    queueMail(em, box, {
      template: 'password_reset',
      to: 'a@broker.test',
      data: { reset_url: 'x' },
      secretData: { reset_url: link },
    }),
  ).toThrow(/also a data key/);
  expect(em.getUnitOfWork().getPersistStack().size).toBe(0);
});

test('when many mails are dispatched at once, then runs claim them in batches of at most 50 and each arrives once', async () => {
  const em = api.runtime.services.orm.em.fork() as EntityManager;
  const mails = Array.from({ length: 120 }, (_, i) =>
    queueMail(em, api.runtime.services.mailSecrets, {
      template: 'password_reset',
      to: `batch-${i}@broker.test`,
      data: { first_name: `Ada${i}` },
      secretData: { reset_url: `https://backoffice.broker.test/reset?token=batch-${i}` },
    }),
  );
  await em.flush();
  // Every job waits until all are queued, so the first runs find the others untried.
  await mailQueue().pause();
  try {
    for (const m of mails) await dispatchMail(api.runtime.services.jobs, m);
  } finally {
    await mailQueue().resume();
  }

  const ids = mails.map((m) => m.id);
  await waitFor(
    'every mail of the batch to settle',
    async () => {
      const [open] = await sql<{ n: number }>(
        api,
        `select count(*)::int as n from mail_messages where id in (?) and status in ('queued', 'sending')`,
        [ids],
      );
      return open!.n === 0;
    },
    30_000,
  );
  const rows = await Promise.all(mails.map((m) => row(m.id)));
  expect(rows.every((r) => r.status === 'sent' && r.attempts === 1 && r.secretData === null)).toBe(true);
  for (const m of mails) expect(received(m.id)).toHaveLength(1);
  const perClaim = new Map<string, number>();
  for (const r of rows) perClaim.set(r.claimedBy!, (perClaim.get(r.claimedBy!) ?? 0) + 1);
  expect(Math.max(...perClaim.values())).toBeLessThanOrEqual(50);
  expect(perClaim.size).toBeLessThan(mails.length / 2);
  // Every claim is a job of one of its own rows.
  for (const claim of perClaim.keys()) expect(mails.map((m) => jobIdOf(m.id))).toContain(claim);
  await waitFor('every send job to finish', async () => {
    const states = await Promise.all(mails.map(async (m) => (await mailQueue().getJob(jobIdOf(m.id)))?.getState()));
    return states.every((s) => s === 'completed');
  });
});

test('when every mail of this file has settled, then none arrived twice', () => {
  const ids = smtp.received.map((m) => /Message-ID: <([^@>]+)@trading-api>/i.exec(m.raw)?.[1]);
  expect(ids.every(Boolean)).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
});
