import type { EntityManager } from '@mikro-orm/postgresql';
import { dispatchMail, requeueStaleMail, SENDING_ORPHAN_SECONDS } from '../../../src/domain/mail/mail-outbox';
import { MailMessage } from '../../../src/entities/mail-message.entity';
import { pastEveryResend, queueResetMail } from '../../helpers/mail';
import { spawnService, type ServiceProcess } from '../../helpers/service-process';
import { messageIdOf, startSmtpSink, type ReceivedMail, type SmtpSink } from '../../helpers/smtp-sink';
import { REDIS_URL, sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';

jest.setTimeout(60_000);

/**
 * The guarantee under test: a worker that dies after handing a mail to the SMTP server and
 * before recording it does not cause a second copy. The sink takes the whole message, then
 * holds its answer while the test kills the worker process.
 */
let smtp: SmtpSink;
let api: TestApp;
let rescuer: TestApp | undefined;
let doomed: ServiceProcess | undefined;
let markHeld!: (mail: ReceivedMail) => void;
const held = new Promise<ReceivedMail>((resolve) => {
  markHeld = resolve;
});
// The sink answers the held message only once the worker that sent it is dead.
let release!: () => void;
const released = new Promise<void>((resolve) => {
  release = resolve;
});

beforeAll(async () => {
  smtp = await startSmtpSink({
    reply: async (mail) => {
      if (mail.to[0]!.startsWith('crash')) {
        markHeld(mail);
        await released;
      }
      return undefined;
    },
  });
  api = await startTestApp({ label: 'mailcrash', env: { ROLE: 'api', SMTP_URL: smtp.url } });
});
afterAll(async () => {
  release();
  doomed?.child.kill('SIGKILL');
  await rescuer?.stop();
  await api?.stop();
  await smtp?.close();
});

const row = (id: string) => api.runtime.services.orm.em.fork().findOneOrFail(MailMessage, id, { refresh: true });

test('when the worker dies between the SMTP hand-off and recording a batch, then every mail of the batch is marked unknown and never sent again', async () => {
  const env = { SMTP_URL: smtp.url, WORKER_LOCK_MS: '2000', MAIL_REQUEUE_AFTER_SECONDS: '1' };
  doomed = spawnService({
    ROLE: 'worker',
    DATABASE_URL: api.config.databaseUrl,
    REDIS_URL,
    QUEUE_PREFIX: api.config.queuePrefix,
    JWT_SECRET: api.config.jwt.secret,
    ...env,
  });
  await doomed.waitForLog('workers started');

  // Three committed mails, one job: its run claims all three as one batch.
  const mails = [];
  for (let i = 1; i <= 3; i++) mails.push((await queueResetMail(api, { to: `crash-${i}@broker.test` })).mail);
  const [mail] = mails;
  await dispatchMail(api.runtime.services.jobs, mail!);
  await held;
  const crashIds = () => smtp.offered.filter((m) => m.to[0]!.startsWith('crash')).map((m) => messageIdOf(m.raw));
  await waitFor('the whole batch to be offered', async () => crashIds().length === 3);
  expect(crashIds().sort()).toEqual(mails.map((m) => m.id).sort());
  for (const m of mails) expect(await row(m.id)).toMatchObject({ status: 'sending', claimedBy: `mail-${mail!.id}` });
  doomed.child.kill('SIGKILL');
  await doomed.exited;
  release();

  // The server keeps the messages it was given; a new worker takes the stalled job over.
  await waitFor('the server to accept the held messages', async () => smtp.received.length === 3);
  rescuer = await startTestApp({ shareWith: api, env: { ROLE: 'worker', ...env } });
  for (const m of mails) {
    const settled = await waitFor(
      'the orphaned mail to settle',
      async () => {
        const r = await row(m.id);
        return r.status === 'sending' ? undefined : r;
      },
      20_000,
    );
    expect(settled).toMatchObject({
      status: 'unknown',
      attempts: 1,
      secretData: null,
      lastError: expect.stringMatching(/at most once/),
    });
  }

  // The relay (every second, MAIL_REQUEUE_AFTER_SECONDS=1) and the job retry leave them alone.
  // The batch-mates never had a job; they settled in the same statement as the first, so one bound covers all.
  await pastEveryResend(api, mail!.id, 1);
  for (const m of mails) {
    expect(smtp.offered.filter((o) => messageIdOf(o.raw) === m.id)).toHaveLength(1);
    expect(smtp.received.filter((o) => messageIdOf(o.raw) === m.id)).toHaveLength(1);
    expect((await row(m.id)).status).toBe('unknown');
  }
});

test('when a row is left sending and its job is gone too, then the relay marks it unknown after the orphan bound, not before', async () => {
  // No worker from here on: the test is the relay.
  await rescuer?.stop();
  rescuer = undefined;
  const { mail } = await queueResetMail(api, { to: 'orphan-1@broker.test' });
  await sql(api, `update mail_messages set status = 'sending', attempts = 1 where id = ?`, [mail.id]);
  const em = () => api.runtime.services.orm.em.fork() as EntityManager;
  const jobs = api.runtime.services.jobs;
  expect((await requeueStaleMail(em(), jobs, { afterSeconds: 1, limit: 100 })).orphaned).toBe(0);
  expect((await row(mail.id)).status).toBe('sending');

  await sql(api, `update mail_messages set updated_at = now() - ? * interval '1 second' where id = ?`, [
    SENDING_ORPHAN_SECONDS + 1,
    mail.id,
  ]);
  expect((await requeueStaleMail(em(), jobs, { afterSeconds: 1, limit: 100 })).orphaned).toBe(1);
  expect(await row(mail.id)).toMatchObject({ status: 'unknown', secretData: null });
});
