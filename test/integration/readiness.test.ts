import { SendMailJob } from '../../src/jobs/send-mail.job';
import { AppError } from '../../src/platform/errors';
import { startPrivateRedis, type PrivateRedis } from '../helpers/redis-server';
import { startTestApp, waitFor, type TestApp } from '../helpers/test-app';

let app: TestApp;
let cutOff: TestApp;
let lostRedis: PrivateRedis;
beforeAll(async () => {
  app = await startTestApp({ label: 'readiness' });
  // A second instance of the same deployment whose Redis goes away after start-up (start-up
  // itself waits for Redis: see test/integration/boot.test.ts).
  lostRedis = await startPrivateRedis();
  cutOff = await startTestApp({ shareWith: app, env: { REDIS_URL: lostRedis.url, ROLE: 'api' } });
  await lostRedis.stop();
  await waitFor('the cut-off instance to see its Redis gone', async () => cutOff.runtime.services.redis.status !== 'ready');
});
afterAll(async () => {
  // Back up first: closing queue connections that wait on a lost Redis is another test's subject.
  await lostRedis?.start();
  await cutOff?.stop();
  await app?.stop();
  await lostRedis?.close();
});

describe('health and readiness', () => {
  test('when Postgres and Redis answer, then /ready is 200', async () => {
    const res = await app.request('GET', '/ready');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
  });

  test('when Redis cannot be reached, then /ready is 503 naming redis and /health is still 200', async () => {
    const ready = await cutOff.request('GET', '/ready');
    expect(ready.status).toBe(503);
    expect(ready.body).toEqual({ status: 'unavailable', checks: { postgres: 'ok', redis: 'down' } });
    expect((await cutOff.request('GET', '/health')).status).toBe(200);
  });

  test('when Redis cannot be reached, then enqueueing fails fast with 503 QUEUE_UNAVAILABLE', async () => {
    const started = Date.now();
    const error = await cutOff.runtime.services.jobs
      .enqueue(SendMailJob, { mail_id: '1b4e28ba-2fa1-41d2-883f-0016d3cca427' })
      .catch((e: unknown) => e);
    expect(Date.now() - started).toBeLessThan(500);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ status: 503, code: 'QUEUE_UNAVAILABLE' });
  });

  test('when Redis is down, then /metrics still answers without queue series', async () => {
    const res = await cutOff.request('GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.text).toContain('http_request_duration_seconds');
    expect(res.text).not.toMatch(/^queue_jobs\{/m);
  });
});
