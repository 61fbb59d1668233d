import { Job } from 'bullmq';
import { SimulatorTickJob } from '../../src/jobs/simulator-tick.job';
import { ADMIN, adminToken, createStaff, type LoggedIn } from '../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../helpers/test-app';
import { flakyPriceFeed } from '../helpers/flaky-feed';

/** The queue operations for scripts (/api/admin/queues) and the dashboard's server-side guards. */
const { feed, processors } = flakyPriceFeed();

let app: TestApp;
let admin: string;
let viewer: LoggedIn;
beforeAll(async () => {
  app = await startTestApp({ label: 'queueadmin', processors });
  admin = await adminToken(app);
  viewer = await createStaff(app, ['view_queues'], admin);
});
afterAll(() => app?.stop());

const stateOf = async (id: string) => (await Job.fromId(app.runtime.services.jobs.queue('simulator'), id))!.getState();

async function failedTick(): Promise<string> {
  feed.down = true;
  const job = await app.runtime.services.jobs.enqueue(SimulatorTickJob, { symbols: ['FEED'], volatility_bps: 1 });
  await waitFor(
    'the tick to fail',
    async () => (await Job.fromId(app.runtime.services.jobs.queue('simulator'), job.id!))?.failedReason,
  );
  return job.id!;
}

describe('/api/admin/queues', () => {
  test('when a viewer lists the queues, then each has counts by state, the oldest waiting age and paused', async () => {
    await failedTick();
    const res = await app.request('GET', '/api/admin/queues', { token: viewer.token });
    expect(res.status).toBe(200);
    const simulator = res.body.items.find((q: { name: string }) => q.name === 'simulator');
    expect(simulator).toMatchObject({ paused: false, counts: expect.objectContaining({ failed: expect.any(Number) }) });
    expect(simulator.counts.failed).toBeGreaterThanOrEqual(1);
    expect(res.body.items.map((q: { name: string }) => q.name).sort()).toEqual([
      'bulk-close',
      'engine',
      'events',
      'mail',
      'orders',
      'risk',
      'simulator',
      'webhooks',
    ]);
  });

  test('when failed jobs are listed, then each shows its reason; an unknown queue or state is 422', async () => {
    const id = await failedTick();
    const res = await app.request('GET', '/api/admin/queues/simulator/jobs?state=failed', { token: viewer.token });
    expect(res.status).toBe(200);
    expect(res.body.items.find((j: { id: string }) => j.id === id)).toMatchObject({
      name: 'simulator-tick',
      failed_reason: 'price feed down',
    });
    expect((await app.request('GET', '/api/admin/queues/nope/jobs', { token: viewer.token })).status).toBe(422);
    expect((await app.request('GET', '/api/admin/queues/simulator/jobs?state=lost', { token: viewer.token })).status).toBe(422);
  });

  test('when a viewer retries, then 403; when a manager retries a failed job, then it runs again, audited; a job not failed is 409', async () => {
    const id = await failedTick();
    expect((await app.request('POST', `/api/admin/queues/simulator/jobs/${id}/retry`, { token: viewer.token })).status).toBe(403);
    feed.down = false;
    const res = await app.request('POST', `/api/admin/queues/simulator/jobs/${id}/retry`, { token: admin });
    expect(res.status).toBe(200);
    await waitFor(
      'the retried job to complete',
      async () =>
        (await Job.fromId(app.runtime.services.jobs.queue('simulator'), id))?.finishedOn &&
        (await (await Job.fromId(app.runtime.services.jobs.queue('simulator'), id))!.getState()) === 'completed',
    );
    const again = await app.request('POST', `/api/admin/queues/simulator/jobs/${id}/retry`, { token: admin });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('JOB_NOT_FAILED');
    const audit = await sql(app, "select 1 from audit_entries where action = 'queue.job.retried' and entity_id = ?", [
      `simulator/${id}`,
    ]);
    expect(audit).toHaveLength(1);
  });
});

describe('the dashboard’s guards, without a browser', () => {
  async function cookieFor(email: string, password: string): Promise<string> {
    const res = await fetch(`${app.baseUrl}/admin/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl },
      body: new URLSearchParams({ email, password }).toString(),
    });
    expect(res.status).toBe(303);
    return res.headers.get('set-cookie')!.split(';')[0]!;
  }

  test('when a state change comes without this origin, then it is refused even with a manager’s cookie', async () => {
    const id = await failedTick();
    const cookie = await cookieFor(ADMIN.email, ADMIN.password);
    const forged = await fetch(`${app.baseUrl}/admin/queues/api/queues/simulator/${id}/retry/failed`, {
      method: 'PUT',
      headers: { cookie },
    });
    expect(forged.status).toBe(403);
    const elsewhere = await fetch(`${app.baseUrl}/admin/queues/api/queues/simulator/${id}/retry/failed`, {
      method: 'PUT',
      headers: { cookie, origin: 'https://evil.example' },
    });
    expect(elsewhere.status).toBe(403);
    expect(await stateOf(id)).toBe('failed');
  });

  test('when a sign-in form is posted from another site, then it is refused; wrong passwords are throttled like the API login', async () => {
    const forged = await fetch(`${app.baseUrl}/admin/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
      body: new URLSearchParams({ email: ADMIN.email, password: ADMIN.password }).toString(),
    });
    expect(forged.status).toBe(403);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${app.baseUrl}/admin/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl, 'x-forwarded-for': '198.51.100.77' },
        body: new URLSearchParams({ email: viewer.email, password: 'not-the-password' }).toString(),
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429]);
  });
});
