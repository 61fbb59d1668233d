import { randomUUID } from 'node:crypto';
import { Job } from 'bullmq';
import { BulkCloseTicketJob } from '../../../src/jobs/bulk-close.job';
import { startTestApp, waitFor, type TestApp } from '../../helpers/test-app';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ label: 'runfailures' });
});
afterAll(() => app?.stop());

test('when a ticket job names a run item that does not exist, then it fails once and is not retried', async () => {
  const { jobs } = app.runtime.services;
  expect(BulkCloseTicketJob.options.attempts).toBeGreaterThan(1);
  // The producer refuses at once while its Redis connection is still coming up (no offline
  // queue): on a loaded machine that can be just after start, so the first enqueue is retried.
  const job = await waitFor('the queue to take the job', () =>
    jobs.enqueue(BulkCloseTicketJob, { run_id: randomUUID(), tickets: ['424242'] }).catch(() => undefined),
  );
  const failed = await waitFor('the job to fail', async () => {
    const current = await Job.fromId(jobs.queue(BulkCloseTicketJob.queue), job.id!);
    return current?.finishedOn ? current : undefined;
  });
  expect(failed.failedReason).toMatch(/has no ticket 424242/);
  expect(failed.attemptsMade).toBe(1);
  expect(await failed.isFailed()).toBe(true);
});
