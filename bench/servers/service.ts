import { startRuntime } from '../../src/runtime';
import { announce, fail } from './announce';
import { benchConfig } from './bench-config';

/**
 * The real service, HTTP tier only (ROLE=api), configured as in production (see
 * bench-config.ts). BENCH_QUEUE_PREFIX lets worker children of servers/worker.ts take its
 * jobs and nobody else's; BOOTSTRAP_ADMIN_* and BULK_CLOSE_WAIT_MS pass through.
 */
async function main(): Promise<void> {
  const runtime = await startRuntime(benchConfig('api'), { defaultMetrics: true });
  if (runtime.port === undefined) throw new Error('ROLE=api should have bound a port');
  announce(runtime.port, () => runtime.stop());
}

main().catch(fail);
