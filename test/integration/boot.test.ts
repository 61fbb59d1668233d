import { randomBytes } from 'node:crypto';
import { freePort, startPrivateRedis } from '../helpers/redis-server';
import { spawnService, spawnWorkerOf, type ServiceProcess } from '../helpers/service-process';
import { REDIS_URL, startTestApp, type TestApp } from '../helpers/test-app';
import { databaseUrl } from '../helpers/test-database';

/**
 * Start-up waits for Postgres and Redis until BOOT_TIMEOUT_MS, then gives up in one line that
 * names what did not answer and how to start it (exit 69, EX_UNAVAILABLE).
 */
jest.setTimeout(90_000);

const running: ServiceProcess[] = [];
afterEach(() => {
  for (const p of running.splice(0)) p.child.kill('SIGKILL');
});

function start(env: Record<string, string>): ServiceProcess {
  const p = spawnService({ JWT_SECRET: randomBytes(32).toString('hex'), PORT: '0', BOOT_TIMEOUT_MS: '1500', ...env });
  running.push(p);
  return p;
}

const HINT = 'to start them: `docker compose up -d postgres redis`';

test('when nothing listens on the Redis port, then start-up gives up after the deadline in one line naming Redis and the fix', async () => {
  const port = await freePort();
  const started = Date.now();
  const p = start({
    REDIS_URL: `redis://127.0.0.1:${port}`,
    DATABASE_URL: databaseUrl(`t_boot_${randomBytes(4).toString('hex')}`),
  });
  expect(await p.exited).toBe(69);
  expect(Date.now() - started).toBeGreaterThanOrEqual(1500);
  expect(p.stderr().trim().split('\n')).toEqual([
    expect.stringMatching(
      new RegExp(`^Redis \\(127\\.0\\.0\\.1:${port}\\) did not answer within 1500 ms \\(BOOT_TIMEOUT_MS\\): `),
    ),
  ]);
  expect(p.stderr()).toContain(HINT);
});

test('when nothing listens on the Postgres port, then start-up gives up naming Postgres (and not Redis, which answers)', async () => {
  const port = await freePort();
  const p = start({ REDIS_URL, DATABASE_URL: `postgres://postgres:secret-password@127.0.0.1:${port}/trading` });
  expect(await p.exited).toBe(69);
  expect(p.stderr().trim().split('\n')).toEqual([
    expect.stringMatching(new RegExp(`^Postgres \\(127\\.0\\.0\\.1:${port}\\) did not answer within 1500 ms`)),
  ]);
  expect(p.stderr()).toContain(HINT);
  expect(p.stderr()).not.toContain('secret-password');
});

describe('a Redis that comes up late', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ label: 'boot', env: { ROLE: 'api' } });
  });
  afterAll(() => app?.stop());

  test('when Redis answers only after start-up began, then the worker waits for it and starts', async () => {
    const late = await startPrivateRedis({ started: false });
    try {
      const worker = spawnWorkerOf(app, { REDIS_URL: late.url, BOOT_TIMEOUT_MS: '60000' });
      running.push(worker);
      await worker.waitForLog('waiting for Postgres and Redis to answer');
      await late.start();
      const listening = await worker.waitForLog('worker http listening', 60_000);
      expect((await fetch(`http://127.0.0.1:${listening.port}/health`)).status).toBe(200);
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
    } finally {
      await late.close();
    }
  });
});
