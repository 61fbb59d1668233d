import { randomBytes } from 'node:crypto';
import { spawnWorkerOf, type ServiceProcess } from '../helpers/service-process';
import { startTestApp, type TestApp } from '../helpers/test-app';

/**
 * Worker processes answer GET /health and GET /metrics on WORKER_HTTP_PORT; METRICS_TOKEN,
 * when set, guards /metrics of the API and of the workers alike.
 */
jest.setTimeout(90_000);

const TOKEN = `scrape-${randomBytes(16).toString('hex')}`;
let api: TestApp;
let worker: ServiceProcess | undefined;
let base: string;

beforeAll(async () => {
  api = await startTestApp({ label: 'workerhttp', env: { ROLE: 'api', METRICS_TOKEN: TOKEN } });
  worker = spawnWorkerOf(api, { METRICS_TOKEN: TOKEN, HOST: '127.0.0.1', WORKER_QUEUES: 'mail' });
  const listening = await worker.waitForLog('worker http listening', 60_000);
  expect(listening.host).toBe('127.0.0.1');
  base = `http://127.0.0.1:${listening.port}`;
});
afterAll(async () => {
  worker?.child.kill('SIGKILL');
  await api?.stop();
});

test('when a worker is asked GET /health, then it answers 200 ok', async () => {
  const res = await fetch(`${base}/health`);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ status: 'ok' });
});

test('when a worker’s /metrics is asked without the token or with another, then it answers 401 in the error format', async () => {
  for (const authorization of [undefined, `Bearer ${TOKEN}x`, TOKEN, `Basic ${TOKEN}`]) {
    const res = await fetch(`${base}/metrics`, { headers: authorization ? { authorization } : {} });
    expect({ authorization, status: res.status }).toEqual({ authorization, status: 401 });
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    expect(await res.json()).toEqual({ detail: expect.stringContaining('METRICS_TOKEN'), code: 'UNAUTHENTICATED' });
  }
});

test('when a worker’s /metrics is asked with the token, then it answers Prometheus text with its process metrics', async () => {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  expect(await res.text()).toMatch(/^process_cpu_user_seconds_total /m);
});

test('when a worker is asked anything else, then it answers 404 or 405, never a 500', async () => {
  expect((await fetch(`${base}/ready/../admin`)).status).toBe(404);
  expect((await fetch(`${base}/health`, { method: 'POST' })).status).toBe(405);
});

test('when the API’s /metrics is asked without the token, then 401; with it, then the metrics', async () => {
  const refused = await api.request('GET', '/metrics');
  expect(refused.status).toBe(401);
  expect(refused.body).toEqual({ detail: expect.stringContaining('METRICS_TOKEN'), code: 'UNAUTHENTICATED' });
  const wrong = await api.request('GET', '/metrics', { token: `${TOKEN}x` });
  expect(wrong.status).toBe(401);
  const allowed = await api.request('GET', '/metrics', { token: TOKEN });
  expect(allowed.status).toBe(200);
  expect(allowed.text).toContain('http_request_duration_seconds');
});
