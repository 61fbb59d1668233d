import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config/config';
import { startRuntime } from '../../src/runtime';
import { fail } from './announce';

/**
 * The real worker tier (ROLE=worker), configured as in production, on the database and queue
 * prefix the bench names: BENCH_DATABASE_URL and BENCH_QUEUE_PREFIX, never an inherited
 * DATABASE_URL. WORKER_CONCURRENCY passes through. It serves no port: once its workers run it
 * prints `{"ready":true}` (start the child with `announces: 'ready'`), and it stops, letting
 * jobs in progress finish, on SIGTERM, SIGINT or when the harness goes away.
 */
async function main(): Promise<void> {
  const config = loadConfig({
    ...process.env,
    NODE_ENV: 'production',
    ROLE: 'worker',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'silent',
    // Production refuses to start without a key; a worker signs nothing, so any will do.
    JWT_SECRET: randomBytes(36).toString('base64url'),
    JWT_SECRET_FILE: undefined,
    DATABASE_URL: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/trading_bench',
    QUEUE_PREFIX: process.env.BENCH_QUEUE_PREFIX ?? 'bench',
    // Only the API child creates the bootstrap admin: two processes racing to create it on a fresh database would collide.
    BOOTSTRAP_ADMIN_EMAIL: undefined,
    BOOTSTRAP_ADMIN_PASSWORD: undefined,
    SHUTDOWN_GRACE_MS: '1000',
  });
  const runtime = await startRuntime(config, { defaultMetrics: true });

  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    runtime.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`stop failed: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  // A parent killed with SIGKILL sends no signal; its IPC channel closing is the only sign left.
  process.on('disconnect', shutdown);
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
}

main().catch(fail);
