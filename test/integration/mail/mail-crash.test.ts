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

test('when the worker dies between the SMTP hand-off and recording it, then the mail is marked unknown and never sent again', async () => {
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

  const { mail } = await queueResetMail(api, { to: 'crash-1@broker.test' });
  await dispatchMail(api.runtime.services.jobs, mail);
  const offered = await held;
  expect(messageIdOf(offered.raw)).toBe(mail.id);
  expect((await row(mail.id)).status).toBe('sending');
  doomed.child.kill('SIGKILL');
  await doomed.exited;
  release();

  // The server keeps the message it was given; a new worker takes the stalled job over.
  await waitFor('the server to accept the held message', async () => smtp.received.length === 1);
  rescuer = await startTestApp({ shareWith: api, env: { ROLE: 'worker', ...env } });
  const settled = await waitFor(
    'the orphaned mail to settle',
    async () => {
      const m = await row(mail.id);
      return m.status === 'sending' ? undefined : m;
    },
    20_000,
  );
  expect(settled).toMatchObject({
    status: 'unknown',
    attempts: 1,
    secretData: null,
    lastError: expect.stringMatching(/at most once/),
  });

  // The relay (every second, MAIL_REQUEUE_AFTER_SECONDS=1) and the job retry leave it alone.
  await pastEveryResend(api, mail.id, 1);
  expect(smtp.offered.filter((m) => messageIdOf(m.raw) === mail.id)).toHaveLength(1);
  expect(smtp.received.filter((m) => messageIdOf(m.raw) === mail.id)).toHaveLength(1);
  expect((await row(mail.id)).status).toBe('unknown');
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
