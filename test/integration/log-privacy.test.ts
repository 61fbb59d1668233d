import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { defineRoute, json, type RouteSpec } from '../../src/api/http/route';
import { ROUTES } from '../../src/api/routes';
import { ExpirePendingOrdersJob } from '../../src/jobs/expire-pending-orders.job';
import { PROCESSORS } from '../../src/workers';
import { defineProcessor } from '../../src/workers/processor';
import { REDIS_URL, startTestApp, waitFor, type TestApp } from '../helpers/test-app';

/**
 * Logs never carry personal data or secrets. A database error is the dangerous one: its
 * message holds the statement with its values, and Postgres's detail quotes the value
 * ("Key (email)=(...) already exists"). This fails a request and a job on one, with an email
 * and payment data among the values, and reads every log line and the job's stored reason.
 */
const EMAIL = 'private.person@example.com';
const CARD = '4111111111111111';

async function failingInsert(em: { execute: (sql: string, params: unknown[]) => Promise<unknown> }): Promise<void> {
  const insert = `insert into staff_users (id, created_at, updated_at, email, password_hash, full_name, is_active, totp_enabled)
                  values (gen_random_uuid(), now(), now(), ?, 'x', ?, true, false)`;
  await em.execute(insert, [EMAIL, CARD]);
  await em.execute(insert, [EMAIL, CARD]); // the email is unique: this one fails
}

const routes: RouteSpec[] = [
  ...ROUTES,
  defineRoute({
    method: 'post',
    path: '/probe/db-error',
    operationId: 'probeDbError',
    summary: 'fails in the database with personal data among the values',
    tags: ['test'],
    access: { kind: 'public' },
    responses: { 500: { description: 'always' } },
    handler: async ({ em }) => {
      await failingInsert(em);
      return json(200, {});
    },
  }),
];

/** The expiry sweep is scheduled at start-up: it fails in the database only once the job test arms it. */
let armed = false;
const processors = PROCESSORS.map((p) =>
  p.definition.name === ExpirePendingOrdersJob.name
    ? defineProcessor(ExpirePendingOrdersJob, async (_payload, { em }) => {
        if (!armed) return { skipped: true };
        await em.execute('delete from staff_users where email = ?', [EMAIL]);
        await failingInsert(em);
        return undefined;
      })
    : p,
);

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ label: 'logprivacy', routes, processors });
});
afterAll(() => app?.stop());

const leaks = (text: string) => text.includes(EMAIL) || text.includes(CARD) || text.includes('private.person');

test('when a request fails in the database, then the log names the constraint but none of the values', async () => {
  const res = await app.request('POST', '/probe/db-error');
  expect(res.status).toBe(500);
  expect(leaks(res.text)).toBe(false);
  const line = app.logs.find((l) => l.msg === 'unhandled error');
  expect(line).toBeDefined();
  expect(line!.err).toMatchObject({ sqlState: '23505', constraint: 'staff_users_email_unique', table: 'staff_users' });
  expect(leaks(JSON.stringify(app.logs))).toBe(false);
});

test('when a job fails in the database, then neither the log nor the failed reason kept in Redis holds the values', async () => {
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(ExpirePendingOrdersJob.queue, { connection, prefix: app.config.queuePrefix });
  try {
    armed = true;
    const job = await app.runtime.services.jobs.enqueue(ExpirePendingOrdersJob, {});
    const failed = await waitFor('the job to fail', async () => {
      const state = await queue.getJob(job.id!);
      return state && (await state.isFailed()) ? state : undefined;
    });
    expect(failed.failedReason).toMatch(/23505/);
    expect(leaks(failed.failedReason)).toBe(false);
    expect(leaks(JSON.stringify(failed.stacktrace))).toBe(false);
    await waitFor('the failure to be logged', async () => app.logs.some((l) => l.msg === 'job failed'));
    expect(leaks(JSON.stringify(app.logs))).toBe(false);
  } finally {
    await queue.close();
    await connection.quit();
  }
});
