import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { Config } from '../../src/config/config';
import { TEST_PROCESS_ENV } from './test-env';
import { directDatabaseUrl, replicaDatabaseUrl } from './test-database';

const ROOT = join(__dirname, '..', '..');

export interface ServiceProcess {
  child: ChildProcess;
  logs: Array<Record<string, unknown>>;
  stderr: () => string;
  exited: Promise<number | null>;
  /** The first log line with this message, waiting up to `timeoutMs` (a minute by default: a loaded machine starts slowly). */
  waitForLog(msg: string, timeoutMs?: number): Promise<Record<string, unknown>>;
}

/**
 * What a deployment behind a cluster or a pooler adds (scripts/cluster-check.sh runs tests so):
 * REDIS_CLUSTER, and a direct DATABASE_MIGRATION_URL beside a DATABASE_URL that goes through PgBouncer;
 * and under scripts/replica-check.sh, the replica's DATABASE_REPLICA_URL.
 */
function deploymentEnv(env: Record<string, string>): Record<string, string> {
  const extra: Record<string, string> = {};
  if (process.env.TEST_REDIS_CLUSTER === 'true') extra.REDIS_CLUSTER = 'true';
  if (process.env.TEST_DATABASE_APP_URL && env.DATABASE_URL && !env.DATABASE_MIGRATION_URL) {
    extra.DATABASE_MIGRATION_URL = directDatabaseUrl(decodeURIComponent(new URL(env.DATABASE_URL).pathname.slice(1)));
  }
  const replica = env.DATABASE_URL && replicaDatabaseUrl(decodeURIComponent(new URL(env.DATABASE_URL).pathname.slice(1)));
  if (replica && !env.DATABASE_REPLICA_URL) extra.DATABASE_REPLICA_URL = replica;
  return extra;
}

/**
 * Runs `src/main.ts` as its own process, as `npm start` would, with only the given
 * environment; `entry` names a test/helpers script that runs it with test-only options, and
 * `built` runs the compiled `dist/main.js` itself, exactly what `npm start` runs (build first).
 */
export function spawnService(env: Record<string, string>, options: { entry?: string; built?: boolean } = {}): ServiceProcess {
  const script = options.entry ? join(ROOT, 'test', 'helpers', `${options.entry}.ts`) : join(ROOT, 'src', 'main.ts');
  const args = options.built ? [join(ROOT, 'dist', 'main.js')] : ['--import', 'tsx', script];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      ...TEST_PROCESS_ENV,
      ...deploymentEnv(env),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Array<Record<string, unknown>> = [];
  let err = '';
  let pending = '';
  const waiters: Array<() => void> = [];
  child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      logs.push(JSON.parse(line));
      waiters.splice(0).forEach((w) => w());
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString('utf8');
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    logs,
    stderr: () => err,
    exited,
    waitForLog(msg, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no "${msg}" log within ${timeoutMs} ms; stderr: ${err}`)), timeoutMs);
        const check = () => {
          const line = logs.find((l) => l.msg === msg);
          if (line) {
            clearTimeout(timer);
            resolve(line);
          } else waiters.push(check);
        };
        exited.then(() => {
          if (!logs.some((l) => l.msg === msg)) {
            clearTimeout(timer);
            reject(new Error(`process exited before "${msg}"; stderr: ${err}`));
          }
        });
        check();
      });
    },
  };
}

/** The deployment an in-process test app belongs to: its database, Redis, queue prefix and key. */
type Deployment = { config: Pick<Config, 'databaseUrl' | 'queuePrefix' | 'jwt' | 'redis' | 'dataKeys'> };

/**
 * A worker-tier process of the same deployment as `app` (same database, Redis, queue prefix
 * and keys, so it opens what the API sealed), for tests that kill or signal the worker tier.
 * `env` adds to or overrides that (WORKER_QUEUES, WORKER_LOCK_MS, ...).
 */
export function spawnWorkerOf(
  app: Deployment,
  env: Record<string, string> = {},
  options: { entry?: string } = {},
): ServiceProcess {
  return spawnService(
    {
      ROLE: 'worker',
      DATABASE_URL: app.config.databaseUrl,
      REDIS_URL: app.config.redis.url,
      QUEUE_PREFIX: app.config.queuePrefix,
      JWT_SECRET: app.config.jwt.secret,
      // Unset, both find the development key in the shared database.
      ...(app.config.dataKeys
        ? { DATA_ENCRYPTION_KEYS: app.config.dataKeys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(',') }
        : {}),
      ...env,
    },
    options,
  );
}
