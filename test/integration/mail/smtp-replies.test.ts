import { MailMessage } from '../../../src/entities/mail-message.entity';
import { dispatchMail } from '../../../src/domain/mail/mail-outbox';
import { SendMailJob } from '../../../src/jobs/send-mail.job';
import { pastEveryResend, queueResetMail } from '../../helpers/mail';
import { messageIdOf, startSmtpSink, type ReceivedMail, type SmtpSink } from '../../helpers/smtp-sink';
import { startTestApp, waitFor, type TestApp } from '../../helpers/test-app';

jest.setTimeout(60_000);

let smtp: SmtpSink;
let app: TestApp;

/** By recipient: greylisted addresses get 451 on their first message, refused ones 550 always. */
const greylisted = new Set<string>();
function reply(mail: ReceivedMail) {
  const to = mail.to[0]!;
  if (to.startsWith('refused')) return { code: 550, message: 'No such mailbox here' };
  if (to.startsWith('greylist') && !greylisted.has(to)) {
    greylisted.add(to);
    return { code: 451, message: 'Greylisted, try again later' };
  }
  return undefined;
}

beforeAll(async () => {
  smtp = await startSmtpSink({ reply });
  app = await startTestApp({ label: 'smtpreplies', env: { SMTP_URL: smtp.url, MAIL_REQUEUE_AFTER_SECONDS: '1' } });
});
afterAll(async () => {
  await app?.stop();
  await smtp?.close();
});

const row = (id: string) => app.runtime.services.orm.em.fork().findOneOrFail(MailMessage, id, { refresh: true });
const offeredOf = (id: string) => smtp.offered.filter((m) => messageIdOf(m.raw) === id);
const receivedOf = (id: string) => smtp.received.filter((m) => messageIdOf(m.raw) === id);

test('when the server answers 451 and then accepts, then the mail is retried after a backoff and arrives once', async () => {
  const { mail } = await queueResetMail(app, { to: 'greylist-1@broker.test' });
  await dispatchMail(app.runtime.services.jobs, mail);
  const sent = await waitFor('the retried mail to be sent', async () => {
    const m = await row(mail.id);
    return m.status === 'sent' ? m : undefined;
  });
  expect(sent).toMatchObject({ attempts: 2, lastError: null, secretData: null });
  expect(offeredOf(mail.id)).toHaveLength(2);
  expect(receivedOf(mail.id)).toHaveLength(1);
  expect(sent.lastError).toBeNull();
  // The retry waited out the backoff (first delay 2 s), on the same job.
  const [first, second] = offeredOf(mail.id);
  expect(second!.at! - first!.at!).toBeGreaterThanOrEqual(1900);
  const job = await app.runtime.services.jobs.queue(SendMailJob.queue).getJob(SendMailJob.jobId!({ mail_id: mail.id }));
  expect(await job!.getState()).toBe('completed');
});

test('when batch-mates get 451, then each is retried by its own job after a backoff and arrives once', async () => {
  const queued = [];
  for (let i = 0; i < 4; i++) queued.push((await queueResetMail(app, { to: `greylist-batch-${i}@broker.test` })).mail);
  const queue = app.runtime.services.jobs.queue(SendMailJob.queue);
  // Only the first gets a job: its run takes the others (committed, untried) into its batch.
  await dispatchMail(app.runtime.services.jobs, queued[0]!);
  const rows = await Promise.all(
    queued.map((mail) =>
      waitFor(`mail ${mail.id} to be sent`, async () => {
        const m = await row(mail.id);
        return m.status === 'sent' ? m : undefined;
      }),
    ),
  );
  // The first run's job failed once, then completed (2 attempts); each batch-mate's retry was a job of its own (1).
  const jobs = await Promise.all(queued.map((m) => queue.getJob(SendMailJob.jobId!({ mail_id: m.id }))));
  expect(jobs.map((j) => j!.attemptsMade)).toEqual([2, 1, 1, 1]);
  // The retries ran under each row's own job.
  expect(rows.map((r) => r.claimedBy)).toEqual(queued.map((m) => SendMailJob.jobId!({ mail_id: m.id })));
  for (const r of rows) {
    expect(r).toMatchObject({ attempts: 2, lastError: null, secretData: null });
    expect(offeredOf(r.id)).toHaveLength(2);
    expect(receivedOf(r.id)).toHaveLength(1);
    const [first, second] = offeredOf(r.id);
    expect(second!.at! - first!.at!).toBeGreaterThanOrEqual(1900);
  }
});

test('when the server answers 550, then the mail is failed at once, with the reply, and never offered again', async () => {
  const { mail } = await queueResetMail(app, { to: 'refused-1@broker.test' });
  await dispatchMail(app.runtime.services.jobs, mail);
  const failed = await waitFor('the refused mail to fail', async () => {
    const m = await row(mail.id);
    return m.status === 'failed' ? m : undefined;
  });
  expect(failed).toMatchObject({ attempts: 1, secretData: null, lastError: expect.stringMatching(/550/) });
  // The relay runs every second with MAIL_REQUEUE_AFTER_SECONDS=1: a failed row stays alone.
  await pastEveryResend(app, mail.id, 1);
  expect(offeredOf(mail.id)).toHaveLength(1);
  expect(receivedOf(mail.id)).toHaveLength(0);
  expect((await row(mail.id)).attempts).toBe(1);
});

test('when the SMTP server refuses the connection, then the row goes back to queued with the error and a retry is scheduled', async () => {
  // A port nobody listens on: bind one, note it, close it.
  const closed = await startSmtpSink();
  const url = closed.url;
  await closed.close();
  const other = await startTestApp({ label: 'smtprefused', env: { SMTP_URL: url } });
  try {
    const { mail } = await queueResetMail(other, { to: 'nobody-home@broker.test' });
    await dispatchMail(other.runtime.services.jobs, mail);
    const retried = await waitFor('the refused send to be recorded', async () => {
      const m = await other.runtime.services.orm.em.fork().findOneOrFail(MailMessage, mail.id, { refresh: true });
      return m.lastError ? m : undefined;
    });
    expect(retried).toMatchObject({
      status: 'queued',
      attempts: 1,
      lastError: expect.stringMatching(/ECONNREFUSED|ECONNECTION/),
    });
    expect(retried.secretData).not.toBeNull();
    const job = await other.runtime.services.jobs.queue(SendMailJob.queue).getJob(SendMailJob.jobId!({ mail_id: mail.id }));
    expect(await job!.getState()).toBe('delayed');
  } finally {
    await other.stop();
  }
});
