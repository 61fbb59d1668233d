import { hostname } from 'node:os';
import { Job } from 'bullmq';
import { ExpirePendingOrdersJob } from '../../src/jobs/expire-pending-orders.job';
import { QUEUES } from '../../src/jobs/queues';
import { SimulatorTickJob } from '../../src/jobs/simulator-tick.job';
import { spawnWorkerOf, type ServiceProcess } from '../helpers/service-process';
import { startTestApp, waitFor, type TestApp } from '../helpers/test-app';

jest.setTimeout(90_000);

/**
 * Worker pools: two worker processes of one deployment, serving
 * different queues, each take only their own queue's jobs; the API's /metrics shows every
 * pool's wait and run times and the age of the oldest waiting job per queue.
 */
let api: TestApp;
const workers: ServiceProcess[] = [];

function worker(queues: string): ServiceProcess {
  const p = spawnWorkerOf(api, { WORKER_QUEUES: queues });
  workers.push(p);
  return p;
}

beforeAll(async () => {
  api = await startTestApp({ label: 'pools', env: { ROLE: 'api' } });
});
afterAll(async () => {
  for (const w of workers) {
    w.child.kill('SIGTERM');
    await w.exited;
  }
  await api?.stop();
});

test('when two pools serve different queues, then each process takes only its own queue’s jobs', async () => {
  const prices = worker('simulator');
  const orders = worker('orders');
  const [pricesUp, ordersUp] = await Promise.all([prices.waitForLog('workers started'), orders.waitForLog('workers started')]);
  expect(pricesUp.queues).toEqual([{ queue: 'simulator', concurrency: 8 }]);
  expect(ordersUp.queues).toEqual([{ queue: 'orders', concurrency: 8 }]);

  const { jobs } = api.runtime.services;
  const added = [
    ...(await Promise.all(
      Array.from({ length: 10 }, () => jobs.enqueue(SimulatorTickJob, { symbols: ['NOQUOTE'], volatility_bps: 1 })),
    )),
    ...(await Promise.all(Array.from({ length: 10 }, () => jobs.enqueue(ExpirePendingOrdersJob, {})))),
  ];
  const finished = await waitFor('every job to complete', async () => {
    const states = await Promise.all(added.map((j) => Job.fromId(jobs.queue(j.queueName as never), j.id!)));
    return states.every((s) => s?.finishedOn) ? states : undefined;
  });
  for (const job of finished) {
    const expected = job!.queueName === QUEUES.simulator ? prices : orders;
    expect(job!.processedBy).toBe(`${hostname()}:${expected.child.pid}`);
  }
});

test('when jobs ran and one waits where no pool serves, then /metrics has their wait and run histograms and the oldest waiting age', async () => {
  // Nobody serves bulk-close here: a job added to it waits.
  await api.runtime.services.jobs
    .queue(QUEUES.bulkClose)
    .add('bulk-close-finish', { run_id: '00000000-0000-4000-8000-000000000000' });
  const metrics = await waitFor('the waiting job to age', async () => {
    const res = await api.request('GET', '/metrics');
    const age = /^queue_oldest_waiting_seconds\{queue="bulk-close"\} ([0-9.e+-]+)$/m.exec(res.text);
    return age && Number(age[1]) >= 1 ? res.text : undefined;
  });
  expect(metrics).toMatch(/^queue_job_wait_seconds_count\{queue="simulator"\} (1\d|[2-9]\d)/m);
  expect(metrics).toMatch(/^queue_job_wait_seconds_bucket\{queue="orders",le="\+Inf"\} (1\d|[2-9]\d)/m);
  expect(metrics).toMatch(/^queue_job_duration_seconds_sum\{queue="orders"\} [0-9.e+-]+$/m);
  expect(metrics).toMatch(/^# TYPE queue_job_wait_seconds histogram$/m);
  expect(metrics).toMatch(/^queue_oldest_waiting_seconds\{queue="simulator"\} 0$/m);
});
