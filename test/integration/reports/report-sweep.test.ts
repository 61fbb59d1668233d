import { Job } from 'bullmq';
import { ReportBuildJob } from '../../../src/jobs/report-build.job';
import { ReportSweepJob } from '../../../src/jobs/report-sweep.job';
import { QUEUES } from '../../../src/jobs/queues';
import { adminToken, createCustomer } from '../../helpers/identity';
import { sql, startTestApp, waitFor, type TestApp } from '../../helpers/test-app';
import { fundedAccount, setUpMarket } from '../../helpers/trading';

/**
 * A report whose build job is lost from Redis does not stay `queued` forever: the sweep, a
 * scheduled job, queues its build again once, and fails it the second time or when a build
 * runs past its bound.
 */
jest.setTimeout(120_000);

let app: TestApp;
let admin: string;
let login: number;

const today = () => new Date().toISOString().slice(0, 10);
const reports = () => app.runtime.services.jobs.queue(QUEUES.reports);
const jobIdOf = (id: string) => ReportBuildJob.jobId!({ report_id: id });

async function reportRow(id: string) {
  const [row] = await sql<{ status: string; error: string | null; requeued: boolean }>(
    app,
    'select status, error, requeued_at is not null as requeued from reports where id = ?',
    [id],
  );
  return row!;
}

/** Asks for a statement while the reports queue is paused, so its build job waits in Redis. */
async function askWhilePaused(): Promise<string> {
  await reports().pause();
  const asked = await app.request('POST', '/api/backoffice/reports', {
    token: admin,
    body: { type: 'account_statement', format: 'json', params: { login, from: today(), to: today() } },
  });
  expect(asked.status).toBe(202);
  expect(await reports().getJobState(jobIdOf(asked.body.id))).toBe('waiting');
  return asked.body.id as string;
}

/** Makes the report look untouched for a while, as one whose job was lost long ago. */
async function age(id: string, minutes: number): Promise<void> {
  await sql(app, `update reports set updated_at = now() - make_interval(mins => ?) where id = ?`, [minutes, id]);
}

/** Runs the sweep now, as its schedule would, and waits for it to finish. */
async function sweep(): Promise<{ requeued: string[]; failed: string[] }> {
  const job = await app.runtime.services.jobs.enqueue(ReportSweepJob, {});
  const queue = app.runtime.services.jobs.queue(ReportSweepJob.queue);
  return waitFor(
    'the sweep to finish',
    async () => {
      const found = await Job.fromId(queue, job.id!);
      if (found?.failedReason) throw new Error(`sweep failed: ${found.failedReason}`);
      return found?.finishedOn ? found.returnvalue : undefined;
    },
    30_000,
  );
}

beforeAll(async () => {
  app = await startTestApp({ label: 'report-sweep' });
  admin = await adminToken(app);
  const customer = await createCustomer(app, admin);
  const { groupId } = await setUpMarket(app, admin);
  login = await fundedAccount(app, admin, customer.id, groupId, 100);
});
afterEach(() => reports().resume());
afterAll(() => app?.stop());

test('when the worker tier runs, then the sweep is scheduled and visible among the queue schedulers', async () => {
  expect(await app.runtime.services.jobs.scheduled(ReportSweepJob, 'report-sweep')).toMatchObject({ everyMs: 60_000 });
  const schedulers = await app.runtime.services.jobs.queue(ReportSweepJob.queue).getJobSchedulers();
  expect(schedulers.map((s) => s.key)).toContain('report-sweep');
});

test('when a queued report loses its job, then the sweep queues the build again and the report completes', async () => {
  const id = await askWhilePaused();
  await reports().remove(jobIdOf(id));
  expect(await reports().getJobState(jobIdOf(id))).toBe('unknown');
  await reports().resume();
  await age(id, 5);
  expect(await reportRow(id)).toMatchObject({ status: 'queued', requeued: false });

  expect(await sweep()).toEqual({ requeued: [id], failed: [] });
  const settled = await waitFor(
    'the report to complete',
    async () => {
      const res = await app.request('GET', `/api/backoffice/reports/${id}`, { token: admin });
      return res.body.status === 'completed' ? res.body : undefined;
    },
    30_000,
  );
  expect(settled).toMatchObject({ status: 'completed', error: null, download_url: `/api/backoffice/reports/${id}/download` });
  expect((await reportRow(id)).requeued).toBe(true);
});

test('when the job is lost a second time, then the report fails with the reason', async () => {
  const id = await askWhilePaused();
  await reports().remove(jobIdOf(id));
  await sql(app, `update reports set requeued_at = now() - interval '10 minutes' where id = ?`, [id]);
  await age(id, 5);

  expect(await sweep()).toEqual({ requeued: [], failed: [id] });
  const res = await app.request('GET', `/api/backoffice/reports/${id}`, { token: admin });
  expect(res.body).toMatchObject({ status: 'failed', download_url: null, error: expect.stringMatching(/lost twice/) });
  expect(res.body.finished_at).not.toBeNull();
});

test('when a build has run past its bound, then the report fails, and its job, when it runs, changes nothing', async () => {
  const id = await askWhilePaused();
  await sql(
    app,
    `update reports set status = 'running', started_at = now() - interval '2 hours', updated_at = now() - interval '2 hours' where id = ?`,
    [id],
  );
  expect(await sweep()).toEqual({ requeued: [], failed: [id] });
  expect(await reportRow(id)).toMatchObject({
    status: 'failed',
    error: expect.stringMatching(/did not finish within 60 minutes/),
  });

  await reports().resume();
  await waitFor('the late job to run', async () => (await reports().getJobState(jobIdOf(id))) === 'completed', 30_000);
  expect((await reportRow(id)).status).toBe('failed');
});

test('when a report waits on a job that exists, or is recent, then the sweep leaves it alone', async () => {
  const waiting = await askWhilePaused();
  await age(waiting, 5);
  const recent = await askWhilePaused();
  await reports().remove(jobIdOf(recent));

  expect(await sweep()).toEqual({ requeued: [], failed: [] });
  expect(await reportRow(waiting)).toMatchObject({ status: 'queued', requeued: false });
  expect(await reportRow(recent)).toMatchObject({ status: 'queued', requeued: false });

  await reports().resume();
  await waitFor('the waiting report to complete', async () => (await reportRow(waiting)).status === 'completed', 30_000);
  // The recent one is left for a later sweep, once it has been untouched long enough.
  await age(recent, 5);
  expect(await sweep()).toEqual({ requeued: [recent], failed: [] });
  await waitFor('the recent report to complete', async () => (await reportRow(recent)).status === 'completed', 30_000);
});
