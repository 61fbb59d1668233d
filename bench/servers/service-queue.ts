import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config/config';
import { startRuntime } from '../../src/runtime';
import { announce, fail } from './announce';

/**
 * The real service, HTTP tier only (ROLE=api), as servers/service.ts but on the queue prefix
 * the bench names (BENCH_QUEUE_PREFIX), so the worker children of servers/worker.ts started
 * with the same BENCH_DATABASE_URL and BENCH_QUEUE_PREFIX take its jobs, and nobody else's.
 * BOOTSTRAP_ADMIN_EMAIL, BOOTSTRAP_ADMIN_PASSWORD and BULK_CLOSE_WAIT_MS pass through.
 */
async function main(): Promise<void> {
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'production',
    ROLE: 'api',
    PORT: '0',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    JWT_SECRET: randomBytes(36).toString('base64url'),
    JWT_SECRET_FILE: undefined,
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/trading_bench',
    QUEUE_PREFIX: process.env.BENCH_QUEUE_PREFIX ?? 'bench',
    SHUTDOWN_GRACE_MS: '1000',
  });
  const runtime = await startRuntime(config, { defaultMetrics: true });
  if (runtime.port === undefined) throw new Error('ROLE=api should have bound a port');
  announce(runtime.port, () => runtime.stop());
}

main().catch(fail);
