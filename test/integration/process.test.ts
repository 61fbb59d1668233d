import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { dispatchMail } from '../../src/domain/mail/mail-outbox';
import { MailMessage } from '../../src/entities/mail-message.entity';
import { QUEUES } from '../../src/jobs/queues';
import { queueResetMail } from '../helpers/mail';
import { spawnService, type ServiceProcess } from '../helpers/service-process';
import { startSmtpSink } from '../helpers/smtp-sink';
import { REDIS_URL, obliterateQueues, startTestApp } from '../helpers/test-app';
import { databaseUrl, dropDatabase } from '../helpers/test-database';

jest.setTimeout(60_000);

const running: ServiceProcess[] = [];
afterEach(() => {
  for (const p of running.splice(0)) p.child.kill('SIGKILL');
});

function start(env: Record<string, string>): ServiceProcess {
  const p = spawnService({ REDIS_URL, JWT_SECRET: randomBytes(32).toString('hex'), ...env });
  running.push(p);
  return p;
}

describe('the service as a process', () => {
  test('when a variable is wrong, then start-up stops with a message naming it', async () => {
    const p = start({ PORT: 'eighty' });
    expect(await p.exited).toBe(78);
    expect(p.stderr()).toMatch(/PORT: must be a whole number/);
  });

  test('when the database does not exist, then start creates it, migrates, serves, and drains on SIGTERM', async () => {
    const name = `t_start_${randomBytes(4).toString('hex')}`;
    const prefix = `test-${randomBytes(6).toString('hex')}`;
    try {
      const p = start({ DATABASE_URL: databaseUrl(name), PORT: '0', QUEUE_PREFIX: prefix });
      const listening = await p.waitForLog('api listening');
      const ready = await fetch(`http://127.0.0.1:${listening.port}/ready`);
      expect(ready.status).toBe(200);

      const db = new Client({ connectionString: databaseUrl(name) });
      await db.connect();
      const applied = await db.query('select name from mikro_orm_migrations');
      await db.end();
      expect(applied.rowCount).toBeGreaterThan(0);

      p.child.kill('SIGTERM');
      expect(await p.exited).toBe(0);
      expect(p.logs.map((l) => l.msg)).toContain('shutdown complete');
    } finally {
      await obliterateQueues(prefix);
      await dropDatabase(name);
    }
  });

  test('when SIGTERM arrives while a job runs, then the worker finishes the job before it exits', async () => {
    const smtp = await startSmtpSink({ delayMs: 1500 });
    // The API side of the deployment, in-process; the worker tier is a separate process.
    const api = await startTestApp({ label: 'shutdown', env: { ROLE: 'api' } });
    try {
      const worker = start({
        ROLE: 'worker',
        DATABASE_URL: api.config.databaseUrl,
        QUEUE_PREFIX: api.config.queuePrefix,
        // One deployment, one key: the worker opens the secrets the API sealed.
        JWT_SECRET: api.config.jwt.secret,
        SMTP_URL: smtp.url,
      });
      await worker.waitForLog('workers started');

      const { mail } = await queueResetMail(api, { to: 'late@broker.test' });
      await dispatchMail(api.runtime.services.jobs, mail);

      await smtp.dataStarted; // the job is now in the middle of its SMTP conversation
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);

      const row = await api.runtime.services.orm.em.fork().findOneOrFail(MailMessage, mail.id);
      expect(row.status).toBe('sent');
      expect(smtp.received).toHaveLength(1);
      const job = await api.runtime.services.jobs.queue(QUEUES.mail).getJob(`mail-${mail.id}`);
      expect(await job!.getState()).toBe('completed');
      const msgs = worker.logs.map((l) => l.msg);
      expect(msgs.indexOf('signal received')).toBeLessThan(msgs.indexOf('shutdown complete'));
    } finally {
      await api.stop();
      await smtp.close();
    }
  });
});
