import { startRuntime } from '../../src/runtime';
import { announce, fail } from './announce';
import { benchConfig } from './bench-config';

/**
 * The real worker tier (ROLE=worker), configured as in production, on the database and queue
 * prefix the bench names: BENCH_DATABASE_URL and BENCH_QUEUE_PREFIX, never an inherited
 * DATABASE_URL. WORKER_CONCURRENCY passes through. It serves no port: once its workers run it
 * prints `{"ready":true}` (start the child with `announces: 'ready'`), and it stops, letting
 * jobs in progress finish, on SIGTERM, SIGINT or when the harness goes away.
 */
async function main(): Promise<void> {
  // Only the API child creates the bootstrap admin: two processes racing to create it on a fresh database would collide.
  const config = benchConfig('worker', { BOOTSTRAP_ADMIN_EMAIL: undefined, BOOTSTRAP_ADMIN_PASSWORD: undefined });
  const runtime = await startRuntime(config, { defaultMetrics: true });

  announce('ready', () => runtime.stop());
}

main().catch(fail);
