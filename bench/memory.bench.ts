import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { ExpirePendingOrdersJob } from '../src/jobs/expire-pending-orders.job';
import { progressOf } from './lib/bench-kit';
import { CHILD_EXEC_ARGV, type BatchRound, type Figure, type Harness, type Server } from './lib/harness';
import { measure } from './lib/load';

/**
 * Does memory leak? The API's and a worker's resident set size after REQUESTS requests and
 * after JOBS jobs, then after as many again: a process that leaks grows on the second run; one
 * that does not settles after the first (V8 keeps the heap it grew to, so the first run's
 * growth is warm-up, not a leak). The figure compares the second run's rate with the first's
 * (1: no slowdown); the RSS readings are in its detail and printed.
 *
 * The API serves GET /health and an authenticated-looking 401 path (the auth pipeline without
 * a database), 32 in flight. The worker (compiled, ROLE=worker, WORKER_QUEUES=orders) runs the
 * pending-order expiry sweep, a real job with one UPDATE, added in bulk.
 */
const progress = progressOf('memory');
const REQUESTS = Number(process.env.BENCH_MEMORY_REQUESTS ?? 100_000);
const JOBS = Number(process.env.BENCH_MEMORY_JOBS ?? 100_000);
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Resident set size of a process, MiB, from /proc (Linux). */
function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return kb ? Math.round(Number(kb) / 102.4) / 10 : NaN;
}

export async function run(h: Harness): Promise<Figure[]> {
  const prefix = `bench-memory-${randomBytes(4).toString('hex')}`;
  const api = await h.start({
    entry: 'servers/service.ts',
    name: 'api',
    execArgv: CHILD_EXEC_ARGV,
    env: { BENCH_QUEUE_PREFIX: prefix },
  });
  const worker = await h.startWorker('worker', { BENCH_QUEUE_PREFIX: prefix, WORKER_QUEUES: 'orders', WORKER_CONCURRENCY: '8' });
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(ExpirePendingOrdersJob.queue, { connection: redis, prefix });
  try {
    const requests = [await serveRequests(api), await serveRequests(api)];
    const jobs = [await runJobs(queue, worker), await runJobs(queue, worker)];
    return [
      h.record({
        name: `API RSS across two runs of ${REQUESTS.toLocaleString('en-US')} requests: second run's rate vs the first's`,
        unit: 'requests',
        size: REQUESTS,
        connections: 32,
        candidate: [requests[1]!],
        baseline: [requests[0]!],
      }),
      h.record({
        name: `worker RSS across two runs of ${JOBS.toLocaleString('en-US')} jobs: second run's rate vs the first's`,
        unit: 'jobs',
        size: JOBS,
        connections: 8,
        candidate: [jobs[1]!],
        baseline: [jobs[0]!],
      }),
    ];
  } finally {
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    redis.disconnect();
  }
}

async function serveRequests(api: Server): Promise<BatchRound> {
  const before = rssMiB(api.pid);
  const started = Date.now();
  let served = 0;
  for (let turn = 0; served < REQUESTS; turn++) {
    // Alternate a 200 and a 401 (the auth pipeline refusing a malformed token) so both paths run.
    const result = await measure({
      url: api.url(turn % 2 ? '/health' : '/api/admin/settings'),
      headers: turn % 2 ? {} : { authorization: 'Bearer not-a-token' },
      connections: 32,
      durationMs: 2000,
      warmupMs: 0,
    });
    served += result.requests;
  }
  const ms = Date.now() - started;
  const after = rssMiB(api.pid);
  progress(`API: ${served.toLocaleString('en-US')} requests in ${ms} ms, RSS ${before} -> ${after} MiB`);
  return { ms: (ms * REQUESTS) / served, detail: { rssBeforeMiB: before, rssAfterMiB: after, served } };
}

async function runJobs(queue: Queue, worker: Server): Promise<BatchRound> {
  const before = rssMiB(worker.pid);
  const started = Date.now();
  for (let added = 0; added < JOBS; added += 1000) {
    const n = Math.min(1000, JOBS - added);
    await queue.addBulk(
      Array.from({ length: n }, () => ({ name: ExpirePendingOrdersJob.name, data: {}, opts: ExpirePendingOrdersJob.options })),
    );
  }
  for (;;) {
    const counts = await queue.getJobCounts('waiting', 'active', 'prioritized'); // not delayed: the sweep's own schedule waits there
    if (Object.values(counts).every((n) => n === 0)) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const ms = Date.now() - started;
  const after = rssMiB(worker.pid);
  progress(`worker: ${JOBS.toLocaleString('en-US')} jobs in ${ms} ms, RSS ${before} -> ${after} MiB`);
  return { ms, detail: { rssBeforeMiB: before, rssAfterMiB: after } };
}
