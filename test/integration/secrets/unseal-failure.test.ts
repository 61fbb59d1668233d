import { randomBytes } from 'node:crypto';
import type { Job } from 'bullmq';
import { UNSEAL_FAILURE_LOG } from '../../../src/domain/secrets/sealed-columns';
import { adminToken } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { startReceiver, type Receiver } from '../../helpers/webhook-receiver';
import { dataKey, insertOrderOpened, insertWebhook, sealUnder } from './secrets-kit';

/**
 * A secret sealed under a key the deployment does not have (removed too early, or a process
 * with another list) is a loud, named failure: the job fails once with `UnsealError` and stays
 * on the dashboard, the log has a line at error naming the value (never the value itself),
 * and secrets_unseal_failures_total counts it. Nothing is sent and nothing retries quietly.
 */
jest.setTimeout(60_000);

const K1 = dataKey('k1');
const K2 = dataKey('k2');
const GONE = dataKey('gone');
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

let app: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  app = await startTestApp({ label: 'unsealfail', env: { DATA_ENCRYPTION_KEYS: `${K2.pair},${K1.pair}` } });
  receiver = await startReceiver(SECRET);
});
afterAll(async () => {
  await app?.stop();
  await receiver?.close();
});

function failuresMetric(text: string, purpose: string, reason: string): number {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`secrets_unseal_failures_total{purpose="${purpose}",reason="${reason}"} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

/** The first failed job of the queue whose id is `jobId`, or starts with it and a dash (a webhook's kicks). */
async function failedJob(queueName: string, jobId: string): Promise<Job> {
  const queue = app.runtime.services.jobs.queue(queueName as 'webhooks');
  return waitFor(
    `job ${jobId} to fail`,
    async () => {
      const failed = await queue.getFailed();
      return failed.find((j) => (j.id === jobId || j.id?.startsWith(`${jobId}-`)) && j.failedReason);
    },
    20_000,
  );
}

test('when a webhook secret was sealed under a key that is not configured, then its delivery job fails by name, logged and counted', async () => {
  const webhookId = await insertWebhook(app, receiver.url, sealUnder([GONE], 'webhook-secret', SECRET));
  const before = failuresMetric((await app.request('GET', '/metrics')).text, 'webhook-secret', 'unknown_key');
  await insertOrderOpened(app);

  const job = await failedJob('webhooks', `webhook-${webhookId}`);
  expect(job.failedReason).toBe(
    `UnsealError: the signing secret of webhook ${webhookId} cannot be unsealed: it was sealed under key id "gone", which is not in DATA_ENCRYPTION_KEYS`,
  );
  // Failed at once, not retried, and kept for the dashboard. A kick for the new event may fail
  // beside the webhook's own job: each is this webhook's, failed once with the same reason.
  expect(job.attemptsMade).toBe(1);
  const failed = await app.runtime.services.jobs.queue('webhooks').getFailed();
  for (const other of failed) {
    expect(other.id).toMatch(new RegExp(`^webhook-${webhookId}`));
    expect(other.attemptsMade).toBe(1);
    expect(other.failedReason).toBe(job.failedReason);
  }

  const line = app.logs.find((l) => l.msg === UNSEAL_FAILURE_LOG && String(l.subject).includes(webhookId));
  expect(line).toMatchObject({ level: 50, purpose: 'webhook-secret', reason: 'unknown_key', key_id: 'gone' });
  expect(JSON.stringify(app.logs)).not.toContain(SECRET);

  const metrics = (await app.request('GET', '/metrics')).text;
  expect(failuresMetric(metrics, 'webhook-secret', 'unknown_key')).toBeGreaterThanOrEqual(before + 1);

  // Nothing reached the endpoint; the delivery says why it waits.
  expect(receiver.received).toEqual([]);
  const attempts = await sql<{ error: string; status_code: number | null }>(
    app,
    `select a.error, a.status_code from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.webhook_id = ?`,
    [webhookId],
  );
  expect(attempts).toEqual([{ error: expect.stringMatching(/cannot be unsealed: .*"gone"/), status_code: null }]);
});

test('when the re-seal meets a value no key opens, then it moves the rest and fails naming that value', async () => {
  const [admin] = await sql<{ id: string }>(app, 'select id from staff_users limit 1');
  await sql(app, 'update staff_users set totp_secret = ? where id = ?', [
    sealUnder([K1], 'totp-secret', 'JBSWY3DPEHPK3PXP'),
    admin!.id,
  ]);
  const bad = await insertWebhook(app, receiver.url, sealUnder([GONE], 'webhook-secret', SECRET));
  const before = failuresMetric((await app.request('GET', '/metrics')).text, 'webhook-secret', 'unknown_key');

  const queued = await app.request('POST', '/api/admin/secrets/reseal', { token: await adminToken(app) });
  expect(queued.status).toBe(202);
  const job = await failedJob('events', 'reseal-secrets');
  const [{ n } = { n: 0 }] = await sql<{ n: number }>(
    app,
    "select count(*)::int as n from webhooks where secret_sealed like 'v2:gone:%'",
  );
  const what =
    n === 1
      ? `the signing secret of webhook ${bad}`
      : `${n} sealed values \\(the first: the signing secret of webhook [0-9a-f-]{36}\\)`;
  expect(job.failedReason).toMatch(new RegExp(`^UnsealError: ${what} cannot be unsealed: it was sealed under key id "gone"`));
  expect(job.attemptsMade).toBe(1);
  const [seed] = await sql<{ totp_secret: string }>(app, 'select totp_secret from staff_users where id = ?', [admin!.id]);
  expect(seed!.totp_secret.startsWith('v2:k2:')).toBe(true);
  const [untouched] = await sql<{ secret_sealed: string }>(app, 'select secret_sealed from webhooks where id = ?', [bad]);
  expect(untouched!.secret_sealed.startsWith('v2:gone:')).toBe(true);
  const metrics = (await app.request('GET', '/metrics')).text;
  expect(failuresMetric(metrics, 'webhook-secret', 'unknown_key')).toBeGreaterThanOrEqual(before + n);
});
