import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config/config';
import { startRuntime } from '../../src/runtime';
import { announce, fail } from './announce';

/**
 * The real service, HTTP tier only, configured as in production. The database comes from
 * BENCH_DATABASE_URL, never from an inherited DATABASE_URL: benches write rows, and a
 * developer's shell often points DATABASE_URL at a database worth keeping.
 */
async function main(): Promise<void> {
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'production',
    ROLE: 'api',
    PORT: '0',
    LOG_LEVEL: 'silent',
    // Production refuses to start without a key; 36 random bytes are 48 base64url characters.
    JWT_SECRET: randomBytes(36).toString('base64url'),
    JWT_SECRET_FILE: undefined,
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/trading_bench',
    QUEUE_PREFIX: 'bench',
    // The load generator is gone by the time we stop: no reason to wait out the default grace.
    SHUTDOWN_GRACE_MS: '1000',
  });
  const runtime = await startRuntime(config, { defaultMetrics: true });
  if (runtime.port === undefined) throw new Error('ROLE=api should have bound a port');
  announce(runtime.port, () => runtime.stop());
}

main().catch(fail);
