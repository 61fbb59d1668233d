import { adminToken, createCustomer } from '../../helpers/identity';
import { databaseUrl } from '../../helpers/test-database';
import { startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { fallbacks, metric } from './replica-kit';

/**
 * A replica that is not there, or not a replica: the heavy reads answer from the primary as if
 * none were configured, each one counted, the outage logged once at warn, and /health says so.
 * (With a real streaming replica: replica-fallback.test.ts, under scripts/replica-check.sh.)
 */
jest.setTimeout(90_000);

describe('a configured replica that does not answer', () => {
  let app: TestApp;
  beforeAll(async () => {
    // Port 1 on loopback: nothing listens there, so every connection is refused at once.
    app = await startTestApp({
      label: 'replica-gone',
      env: { DATABASE_REPLICA_URL: 'postgres://postgres:replica-secret-9@127.0.0.1:1/trading' },
    });
  });
  afterAll(() => app?.stop());

  test('when the event feed is read, then the primary answers it, the fallback is counted, logged at warn, and /health says down', async () => {
    const health = await waitFor('the first probe', async () => {
      const res = await app.request('GET', '/health');
      return res.body.replica?.state === 'down' ? res.body : undefined;
    });
    expect(health).toMatchObject({ status: 'ok', replica: { state: 'down', lag_ms: null } });
    const admin = await adminToken(app);
    await createCustomer(app, admin);
    const feed = await waitFor('the customer event in the feed', async () => {
      const res = await app.request('GET', '/api/crm/events?limit=1000', { token: admin });
      expect(res.status).toBe(200);
      return res.body.items.some((e: { type: string }) => e.type === 'customer.created') ? res.body : undefined;
    });
    expect(feed.items.length).toBeGreaterThan(0);
    expect(await metric(app, 'db_replica_fallbacks_total', 'reason="down"')).toBeGreaterThan(0);
    expect(await metric(app, 'db_replica_up')).toBe(0);
    const warned = app.logs.filter((l) => l.msg === 'read replica not answering: heavy reads go to the primary');
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({ level: 40 });
    // The URL's password is never logged.
    expect(JSON.stringify(app.logs)).not.toContain('replica-secret-9');
  });
});

describe('a configured replica that is a primary (not replaying)', () => {
  let app: TestApp;
  beforeAll(async () => {
    // The test server's maintenance database: a primary, as a promoted replica would be.
    app = await startTestApp({ label: 'replica-promoted', env: { DATABASE_REPLICA_URL: databaseUrl('postgres') } });
  });
  afterAll(() => app?.stop());

  test('when it is probed, then nothing is read from it: it could be any age', async () => {
    await waitFor('the first probe', async () =>
      (await app.request('GET', '/health')).body.replica?.state === 'down' ? true : undefined,
    );
    const admin = await adminToken(app);
    const before = await fallbacks(app);
    const res = await app.request('GET', '/api/crm/events?limit=5', { token: admin });
    expect(res.status).toBe(200);
    expect(await fallbacks(app)).toBe(before + 1);
  });
});

describe('no replica configured', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ label: 'replica-none', env: { DATABASE_REPLICA_URL: '' } });
  });
  afterAll(() => app?.stop());

  test('when /health and /metrics are asked, then neither mentions a replica', async () => {
    expect((await app.request('GET', '/health')).body).toEqual({ status: 'ok' });
    expect((await app.request('GET', '/metrics')).text).not.toContain('db_replica_');
  });
});
