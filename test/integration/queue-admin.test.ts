import { Job } from 'bullmq';
import { SimulatorTickJob } from '../../src/jobs/simulator-tick.job';
import { ADMIN, adminToken, createStaff, type LoggedIn } from '../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../helpers/test-app';
import { flakyPriceFeed } from '../helpers/flaky-feed';

/**
 * The queue operations for scripts (/api/admin/queues) and the dashboard's server-side guards:
 * what a dashboard change may be (retry, promote, clean, remove; never add or edit a job), and
 * its cookie as a credential of its own (a dashboard session, not an access token).
 */
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
      'eod',
      'events',
      'mail',
      'orders',
      'reports',
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

/** Signs in on the dashboard's form; the `admin_session=...` pair and the whole Set-Cookie header. */
async function signIn(target: TestApp, email: string, password: string): Promise<{ cookie: string; setCookie: string }> {
  const res = await fetch(`${target.baseUrl}/admin/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: target.baseUrl },
    body: new URLSearchParams({ email, password }).toString(),
  });
  expect(res.status).toBe(303);
  const setCookie = res.headers.get('set-cookie')!;
  return { cookie: setCookie.split(';')[0]!, setCookie };
}

/** A request of the dashboard's own page (same origin), with the cookie. */
function board(target: TestApp, cookie: string, method: string, path: string, body?: unknown) {
  return fetch(`${target.baseUrl}/admin/queues${path}`, {
    method,
    headers: {
      cookie,
      origin: target.baseUrl,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const simulatorJobs = async () => {
  const counts = await app.runtime.services.jobs.queue('simulator').getJobCounts();
  return Object.values(counts).reduce((a, b) => a + b, 0);
};

describe('the dashboard’s guards, without a browser', () => {
  const cookieFor = async (email: string, password: string) => (await signIn(app, email, password)).cookie;

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

describe('what the dashboard may change', () => {
  test('when a manager posts to bull-board’s add-job route, then 403 in the error format and no job is added', async () => {
    const { cookie } = await signIn(app, ADMIN.email, ADMIN.password);
    const before = await simulatorJobs();
    for (let i = 0; i < 3; i++) {
      const res = await board(app, cookie, 'POST', '/api/queues/simulator/add', {
        name: 'simulator-tick',
        data: { symbols: ['FEED'], volatility_bps: 4400 },
        options: {},
      });
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({ code: 'FORBIDDEN', detail: expect.stringContaining('never adds a job') });
    }
    expect(await simulatorJobs()).toBe(before);
    const audit = await sql(app, "select 1 from audit_entries where action = 'queue.job.added'");
    expect(audit).toHaveLength(0);
  });

  test('when a manager sends new data, delay or priority for a job, then 403 and the job is unchanged', async () => {
    const id = await failedTick();
    const { cookie } = await signIn(app, ADMIN.email, ADMIN.password);
    const job = () => Job.fromId(app.runtime.services.jobs.queue('simulator'), id);
    const before = (await job())!.data;
    const attempts: Array<[string, string, unknown]> = [
      ['PATCH', `/api/queues/simulator/${id}/update-data`, { jobData: { symbols: ['FEED'], volatility_bps: 4400 } }],
      ['PATCH', `/api/queues/simulator/${id}/delay`, { delay: 1000 }],
      ['PATCH', `/api/queues/simulator/${id}/priority`, { priority: 1 }],
      ['PUT', '/api/queues/simulator/pause', undefined],
      ['PUT', '/api/queues/simulator/obliterate', undefined],
      ['PUT', '/api/queues/pause', undefined],
    ];
    for (const [method, path, body] of attempts) {
      const res = await board(app, cookie, method, path, body);
      expect([method, path, res.status]).toEqual([method, path, 403]);
    }
    expect((await job())!.data).toEqual(before);
    expect(await stateOf(id)).toBe('failed');
    expect(await app.runtime.services.jobs.queue('simulator').isPaused()).toBe(false);
  });

  test('when a manager retries a completed job, or all completed jobs, then it is refused and nothing runs again', async () => {
    const { cookie } = await signIn(app, ADMIN.email, ADMIN.password);
    feed.down = false;
    const done = await app.runtime.services.jobs.enqueue(SimulatorTickJob, { symbols: ['FEED'], volatility_bps: 3 });
    await waitFor('the tick to complete', async () => (await stateOf(done.id!)) === 'completed');
    const finishedOn = (await Job.fromId(app.runtime.services.jobs.queue('simulator'), done.id!))!.finishedOn;

    const one = await board(app, cookie, 'PUT', `/api/queues/simulator/${done.id}/retry`);
    expect(one.status).toBe(409);
    expect(await one.json()).toEqual({ code: 'JOB_NOT_FAILED', detail: expect.any(String) });
    expect((await board(app, cookie, 'PUT', '/api/queues/simulator/retry/completed')).status).toBe(403);
    expect(await stateOf(done.id!)).toBe('completed');
    expect((await Job.fromId(app.runtime.services.jobs.queue('simulator'), done.id!))!.finishedOn).toBe(finishedOn);
  });

  test('when a manager retries, promotes, removes and cleans through the dashboard, then each works and is audited', async () => {
    const { cookie } = await signIn(app, ADMIN.email, ADMIN.password);
    const queue = app.runtime.services.jobs.queue('simulator');

    const failed = await failedTick();
    feed.down = false;
    expect((await board(app, cookie, 'PUT', `/api/queues/simulator/${failed}/retry`)).status).toBe(204);
    await waitFor('the retried job to complete', async () => (await stateOf(failed)) === 'completed');

    feed.down = true;
    const delayed = await app.runtime.services.jobs.enqueue(
      SimulatorTickJob,
      { symbols: ['FEED'], volatility_bps: 2 },
      { delay: 3_600_000 },
    );
    expect(await stateOf(delayed.id!)).toBe('delayed');
    expect((await board(app, cookie, 'PUT', `/api/queues/simulator/${delayed.id}/promote`)).status).toBe(204);
    await waitFor('the promoted job to run and fail', async () => (await stateOf(delayed.id!)) === 'failed');

    expect((await board(app, cookie, 'PUT', `/api/queues/simulator/${delayed.id}/clean`)).status).toBe(204);
    expect(await Job.fromId(queue, delayed.id!)).toBeUndefined();

    await failedTick();
    // bull-board cleans only jobs that failed more than 5 s ago.
    await waitFor(
      'the failed jobs to be cleaned',
      async () => {
        expect((await board(app, cookie, 'PUT', '/api/queues/simulator/clean/failed')).status).toBe(200);
        return (await queue.getJobCounts('failed')).failed === 0;
      },
      15_000,
    );

    const audit = await sql<{ action: string }>(app, "select action from audit_entries where entity_type = 'queue'");
    expect(new Set(audit.map((a) => a.action))).toEqual(
      new Set(['queue.jobs.retried', 'queue.jobs.promoted', 'queue.jobs.removed', 'queue.cleaned']),
    );
  });
});

describe('the dashboard cookie as a credential', () => {
  let short: TestApp;
  const IDLE = 2;
  const ABSOLUTE = 5;
  beforeAll(async () => {
    short = await startTestApp({
      label: 'dashcookie',
      processors,
      env: {
        DASHBOARD_IDLE_TIMEOUT_SECONDS: String(IDLE),
        DASHBOARD_SESSION_MAX_SECONDS: String(ABSOLUTE),
        DASHBOARD_COOKIE_SECURE: 'false',
      },
    });
  });
  afterAll(() => short?.stop());

  const valueOf = (cookie: string) => decodeURIComponent(cookie.split('=').slice(1).join('='));
  const sessionOf = async (target: TestApp, cookie: string) => {
    const [row] = await sql<{ id: string; kind: string; secret_hash: string; revoked_reason: string | null }>(
      target,
      "select id, kind, secret_hash, revoked_reason from sessions where secret_hash = encode(sha256(convert_to(?, 'UTF8')), 'hex')",
      [valueOf(cookie)],
    );
    return row;
  };

  test('when the cookie value is sent as a Bearer token, then the API answers 401; it is stored only as a hash', async () => {
    const { cookie } = await signIn(app, ADMIN.email, ADMIN.password);
    expect((await board(app, cookie, 'GET', '/api/queues')).status).toBe(200);
    for (const path of ['/auth/sessions', '/api/admin/queues', '/api/admin/settings']) {
      const res = await app.request('GET', path, { token: valueOf(cookie) });
      expect([path, res.status]).toEqual([path, 401]);
    }
    const session = await sessionOf(app, cookie);
    expect(session).toMatchObject({ kind: 'dashboard', revoked_reason: null });
    expect(session!.secret_hash).not.toContain(valueOf(cookie));
  });

  test('when the user signs out, then the session is revoked and the cookie is refused', async () => {
    const { cookie } = await signIn(app, ADMIN.email, ADMIN.password);
    const out = await fetch(`${app.baseUrl}/admin/logout`, { redirect: 'manual', headers: { cookie } });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toMatch(/^admin_session=; .*Max-Age=0/);
    expect((await board(app, cookie, 'GET', '/api/queues')).status).toBe(401);
    expect((await sessionOf(app, cookie))!.revoked_reason).toBe('signed_out');
  });

  test('when the session is deleted from the session list, or the user is deactivated, then the cookie is refused at once', async () => {
    const admin = await adminToken(app);
    const user = await createStaff(app, ['view_queues'], admin);
    const first = await signIn(app, user.email, user.password);
    const listed = await app.request('GET', '/auth/sessions', { token: user.token });
    const id = (await sessionOf(app, first.cookie))!.id;
    expect(listed.body.items.map((s: { id: string }) => s.id)).toContain(id);
    expect((await app.request('DELETE', `/auth/sessions/${id}`, { token: user.token })).status).toBe(204);
    expect((await board(app, first.cookie, 'GET', '/api/queues')).status).toBe(401);

    const second = await signIn(app, user.email, user.password);
    expect((await board(app, second.cookie, 'GET', '/api/queues')).status).toBe(200);
    expect((await app.request('PATCH', `/api/admin/users/${user.id}`, { token: admin, body: { is_active: false } })).status).toBe(
      200,
    );
    expect((await board(app, second.cookie, 'GET', '/api/queues')).status).toBe(401);
  });

  test('when the dashboard is left idle past its idle timeout, then the cookie is refused', async () => {
    const { cookie } = await signIn(short, ADMIN.email, ADMIN.password);
    expect((await board(short, cookie, 'GET', '/api/queues')).status).toBe(200);
    // Watched in Postgres, not by requests: a request is activity and would keep the session alive.
    await waitFor(
      'the idle timeout to pass',
      async () =>
        (
          await sql<{ ended: boolean }>(
            short,
            "select expires_at <= now() as ended from sessions where kind = 'dashboard' and id = ?",
            [(await sessionOf(short, cookie))!.id],
          )
        )[0]!.ended,
    );
    expect((await board(short, cookie, 'GET', '/api/queues')).status).toBe(401);
  });

  test('when the dashboard is used without pause, then it outlives the idle timeout but ends at the absolute limit', async () => {
    const signedIn = Date.now();
    const { cookie, setCookie } = await signIn(short, ADMIN.email, ADMIN.password);
    expect(setCookie).toContain(`Max-Age=${ABSOLUTE}`);
    const ended = await waitFor(
      'the absolute limit to end an active session',
      async () => (await board(short, cookie, 'GET', '/api/queues')).status === 401 && Date.now(),
      (ABSOLUTE + 5) * 1000,
    );
    // Polled every 50 ms, so never idle: only the absolute limit can have ended it.
    expect(ended - signedIn).toBeGreaterThanOrEqual((ABSOLUTE - 1) * 1000);
    expect(ended - signedIn).toBeGreaterThan(IDLE * 1000);
  });

  test('when DASHBOARD_COOKIE_SECURE is false, then the cookie has no Secure flag; by default outside development it has', async () => {
    const plain = (await signIn(short, ADMIN.email, ADMIN.password)).setCookie;
    expect(plain).toMatch(/HttpOnly/);
    expect(plain).not.toMatch(/Secure/);
    const secure = (await signIn(app, ADMIN.email, ADMIN.password)).setCookie;
    expect(secure).toMatch(/; Secure/);
    expect(secure).toMatch(/SameSite=Strict/);
  });
});

describe('the dashboard pages in a browser’s way', () => {
  const signInWith = (fields: Record<string, string>) =>
    fetch(`${app.baseUrl}/admin/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.baseUrl },
      body: new URLSearchParams(fields).toString(),
    });

  test('when a page is asked for signed out, then sign-in comes back to that page, and never to another site', async () => {
    const away = await fetch(`${app.baseUrl}/admin/live`, { redirect: 'manual' });
    expect({ status: away.status, location: away.headers.get('location') }).toEqual({
      status: 303,
      location: '/admin/login?next=%2Fadmin%2Flive',
    });
    const form = await (await fetch(`${app.baseUrl}${away.headers.get('location')}`)).text();
    expect(form).toContain('<input type="hidden" name="next" value="/admin/live">');

    const credentials = { email: ADMIN.email, password: ADMIN.password };
    const back = await signInWith({ ...credentials, next: '/admin/live' });
    expect({ status: back.status, location: back.headers.get('location') }).toEqual({ status: 303, location: '/admin/live' });
    for (const next of ['https://evil.example/admin/live', '//evil.example/admin/queues', '/admin/../api/admin/users', '/docs'])
      expect({ next, location: (await signInWith({ ...credentials, next })).headers.get('location') }).toEqual({
        next,
        location: '/admin/queues',
      });
  });

  test('when the dashboard is opened, then it asks no other host for a font, and every page has an icon', async () => {
    const cookie = await cookieOf(await signInWith({ email: ADMIN.email, password: ADMIN.password }));
    const page = await (await fetch(`${app.baseUrl}/admin/queues`, { headers: { cookie } })).text();
    expect(page).toContain('<link href="/admin/dashboard.css" rel="stylesheet">');
    expect(page).not.toMatch(/fonts\.googleapis|fonts\.gstatic/);
    for (const path of ['/favicon.ico', '/favicon.svg']) {
      const icon = await fetch(`${app.baseUrl}${path}`);
      expect({ path, status: icon.status, type: icon.headers.get('content-type') }).toEqual({
        path,
        status: 200,
        type: 'image/svg+xml; charset=utf-8',
      });
      expect(await icon.text()).toMatch(/^<svg /);
    }
    const live = await (await fetch(`${app.baseUrl}/admin/live`, { headers: { cookie } })).text();
    expect(live).toContain('<link rel="icon" type="image/svg+xml" href="/favicon.svg">');
  });
});

const cookieOf = async (res: Response) => {
  expect(res.status).toBe(303);
  return res.headers.get('set-cookie')!.split(';')[0]!;
};
