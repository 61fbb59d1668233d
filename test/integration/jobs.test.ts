import { randomUUID } from 'node:crypto';
import { Job, Queue } from 'bullmq';
import { z } from 'zod';
import { MailMessage } from '../../src/entities/mail-message.entity';
import { dispatchMail } from '../../src/domain/mail/mail-outbox';
import { JOB_DEFINITIONS } from '../../src/jobs';
import { defineJob, retryPolicy } from '../../src/jobs/job-definition';
import { QUEUES } from '../../src/jobs/queues';
import { QueueEventsHub } from '../../src/jobs/queue-events-hub';
import { SendMailJob } from '../../src/jobs/send-mail.job';
import { PROCESSORS } from '../../src/workers';
import { defineProcessor } from '../../src/workers/processor';
import { ProcessorRegistryError, checkProcessors } from '../../src/workers/worker-host';
import { queueResetMail } from '../helpers/mail';
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink';
import { startTestApp, waitFor, type TestApp } from '../helpers/test-app';

describe('job registry', () => {
  test('when every job has one processor, then the registry maps names to processors', () => {
    const byName = checkProcessors(JOB_DEFINITIONS, PROCESSORS);
    expect([...byName.keys()].sort()).toEqual(JOB_DEFINITIONS.map((d) => d.name).sort());
  });

  test('when a job has no processor, then the worker tier refuses to start', () => {
    expect(() => checkProcessors(JOB_DEFINITIONS, [])).toThrow(/job "send-mail" has no processor/);
  });

  test('when a job has two processors, then the worker tier refuses to start', () => {
    expect(() => checkProcessors(JOB_DEFINITIONS, [...PROCESSORS, ...PROCESSORS])).toThrow(/"send-mail" has two processors/);
  });

  test('when a processor names an unknown job, then the worker tier refuses to start', () => {
    const Stray = defineJob({ name: 'stray', queue: QUEUES.mail, schema: z.object({}), options: retryPolicy(1) });
    expect(() => checkProcessors(JOB_DEFINITIONS, [...PROCESSORS, defineProcessor(Stray, async () => undefined)])).toThrow(
      ProcessorRegistryError,
    );
  });

  test('when the runtime starts with an incomplete registry, then start-up fails and nothing is left open', async () => {
    await expect(startTestApp({ label: 'registry', processors: [] })).rejects.toThrow(ProcessorRegistryError);
  });
});

describe('jobs end to end', () => {
  let app: TestApp;
  let smtp: SmtpSink;
  beforeAll(async () => {
    smtp = await startSmtpSink();
    app = await startTestApp({ label: 'jobs', env: { SMTP_URL: smtp.url, MAIL_FROM: 'Back Office <ops@broker.test>' } });
  });
  afterAll(async () => {
    await app?.stop();
    await smtp?.close();
  });

  async function newMail(): Promise<MailMessage> {
    return (await queueResetMail(app)).mail;
  }

  async function mailRow(id: string): Promise<MailMessage> {
    return app.runtime.services.orm.em.fork().findOneOrFail(MailMessage, id);
  }

  test('when a mail is dispatched, then the worker sends it over SMTP and records it', async () => {
    const mail = await newMail();
    await dispatchMail(app.runtime.services.jobs, mail);
    const job = await app.runtime.services.jobs.queue(QUEUES.mail).getJob(`mail-${mail.id}`);
    await app.runtime.services.queueEvents.waitFor(job!, 10_000);

    const row = await mailRow(mail.id);
    expect(row).toMatchObject({ status: 'sent', attempts: 1, lastError: null });
    expect(row.sentAt).toBeInstanceOf(Date);
    const received = smtp.received.find((m) => m.raw.includes(mail.id));
    expect(received).toMatchObject({ from: 'ops@broker.test', to: ['customer@broker.test'] });
    expect(received!.raw).toContain('Subject: Reset your password');
  });

  test('when the same mail is dispatched twice, then it is sent once', async () => {
    const mail = await newMail();
    await dispatchMail(app.runtime.services.jobs, mail);
    await waitFor('mail sent', async () => (await mailRow(mail.id)).status === 'sent');
    // A second job for the same row (a replay, or a relay that re-enqueues) finds it done.
    const again = await app.runtime.services.jobs.queue(QUEUES.mail).add(SendMailJob.name, { mail_id: mail.id });
    await app.runtime.services.queueEvents.waitFor(again, 10_000);
    expect(smtp.received.filter((m) => m.raw.includes(mail.id))).toHaveLength(1);
  });

  test('when a payload is invalid, then the producer rejects it before it reaches Redis', async () => {
    await expect(app.runtime.services.jobs.enqueue(SendMailJob, { mail_id: 'nope' })).rejects.toThrow(z.ZodError);
  });

  test('when an invalid payload reaches a worker anyway, then the job fails once, unrecoverably', async () => {
    const queue: Queue = app.runtime.services.jobs.queue(QUEUES.mail);
    const job = await queue.add(SendMailJob.name, { mail_id: 42 }, { attempts: 5 });
    await expect(app.runtime.services.queueEvents.waitFor(job, 10_000)).rejects.toThrow(/invalid payload/);
    const failed = await Job.fromId(queue, job.id!);
    expect(failed!.attemptsMade).toBe(1);
    expect(await failed!.getState()).toBe('failed');
  });

  test('when jobs ran, then /metrics reports their outcomes and the queue depth', async () => {
    const res = await app.request('GET', '/metrics');
    expect(res.text).toMatch(/^queue_job_outcomes_total\{queue="mail",outcome="completed"\} [1-9]/m);
    expect(res.text).toMatch(/^queue_job_outcomes_total\{queue="mail",outcome="failed"\} [1-9]/m);
    expect(res.text).toMatch(/^queue_jobs\{queue="mail",state="waiting"\} 0/m);
  });

  test("when a job's finish event is never heard, then the wait still ends, from the job's state", async () => {
    const { jobs, redis, config } = app.runtime.services;
    const hub = new QueueEventsHub(redis, config.queuePrefix);
    try {
      // A QueueEvents that hears nothing: the state read is all the wait has.
      await (await hub.for(QUEUES.mail)).close();
      const mail = await newMail();
      await dispatchMail(jobs, mail);
      const job = await jobs.queue(QUEUES.mail).getJob(`mail-${mail.id}`);
      const started = Date.now();
      await hub.waitFor(job!, 10_000);
      expect((await mailRow(mail.id)).status).toBe('sent');
      expect(Date.now() - started).toBeLessThan(5_000);
      const broken = await jobs.queue(QUEUES.mail).add(SendMailJob.name, { mail_id: 42 }, { attempts: 1 });
      await expect(hub.waitFor(broken, 10_000)).rejects.toThrow(/invalid payload/);
    } finally {
      await hub.close();
    }
  });

  test('when the hub closes, then a wait in progress ends at once', async () => {
    const { redis, config } = app.runtime.services;
    const hub = new QueueEventsHub(redis, config.queuePrefix);
    const queue = new Queue('idle', { connection: redis, prefix: config.queuePrefix });
    try {
      const job = await queue.add('never-run', {});
      await hub.for('idle' as never);
      const wait = hub.waitFor(job, 60_000);
      await new Promise((r) => setTimeout(r, 100)); // the wait is on
      // Attached before closing: QueueEvents.close() yields to the event loop, and a
      // rejection still unobserved by then counts as unhandled.
      const outcome = expect(wait).rejects.toThrow(/closing/);
      await hub.close();
      await outcome;
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });

  test('when many waits run at once, then the process has opened one QueueEvents for the queue, not one per wait', async () => {
    const { jobs, queueEvents } = app.runtime.services;
    const added = await Promise.all(
      Array.from({ length: 5 }, () => jobs.queue(QUEUES.mail).add(SendMailJob.name, { mail_id: randomUUID() }, { attempts: 1 })),
    );
    await Promise.all(added.map((job) => queueEvents.waitFor(job, 10_000).catch(() => undefined)));
    expect(queueEvents.openedCount).toBe(1);
  });
});

describe('mail without SMTP', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ label: 'nosmtp' });
  });
  afterAll(() => app?.stop());

  test('when SMTP_URL is unset, then the mail is logged and recorded, not sent', async () => {
    const { mail, token } = await queueResetMail(app, { to: 'someone@broker.test' });
    await dispatchMail(app.runtime.services.jobs, mail);
    await waitFor(
      'mail logged',
      async () => (await app.runtime.services.orm.em.fork().findOne(MailMessage, mail.id))?.status === 'logged',
    );
    const line = app.logs.find((l) => l.msg === 'mail not sent: SMTP_URL is not set');
    expect(line).toMatchObject({ to: 'someone@broker.test', subject: 'Reset your password' });
    expect(JSON.stringify(app.logs)).not.toContain(token);
  });
});
