import { randomBytes } from 'node:crypto';
import { loadConfig, type Config } from '../../src/config/config';

/**
 * The configuration every bench child runs with: production settings on the bench's own
 * database and queue prefix. The database comes from BENCH_DATABASE_URL, never from an
 * inherited DATABASE_URL: benches write rows, and a developer's shell often points
 * DATABASE_URL at a database worth keeping.
 */
export function benchConfig(role: 'api' | 'worker', overrides: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    ...process.env,
    NODE_ENV: 'production',
    ROLE: role,
    PORT: '0',
    // A bench worker's /health and /metrics on a free port: 9100 may be a running worker's.
    WORKER_HTTP_PORT: '0',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    // Production refuses to start without a key; 36 random bytes are 48 base64url characters.
    JWT_SECRET: process.env.BENCH_JWT_SECRET ?? randomBytes(36).toString('base64url'),
    JWT_SECRET_FILE: undefined,
    // Production requires it too; BENCH_DATA_ENCRYPTION_KEYS when the bench seals a secret the child opens.
    DATA_ENCRYPTION_KEYS: process.env.BENCH_DATA_ENCRYPTION_KEYS ?? `bench:${randomBytes(32).toString('base64')}`,
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/trading_bench',
    QUEUE_PREFIX: process.env.BENCH_QUEUE_PREFIX ?? 'bench',
    // The load generator is gone by the time we stop: no reason to wait out the default grace.
    SHUTDOWN_GRACE_MS: '1000',
    ...overrides,
  });
}
