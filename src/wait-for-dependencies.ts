import { Client } from 'pg';
import { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from './config/config';
import { splitDatabaseUrl } from './db/database';
import { StartupRefused } from './startup-refused';

/**
 * Start-up waits for Postgres and Redis, retrying until BOOT_TIMEOUT_MS has passed: under
 * `docker compose up` or on a loaded machine they may answer a few seconds after this
 * process starts. Past the deadline it gives up with one line naming what did not answer and
 * how to start it, instead of a driver's stack trace.
 */
const START_HINT =
  'to start them: `docker compose up -d postgres redis` (Debian packages: `sudo service postgresql start` and `sudo service redis-server start`)';

/** host:port of a URL, without the credentials it may carry. */
function where(url: string): string {
  const parsed = new URL(url.split(',')[0]!.trim());
  return `${parsed.hostname}:${parsed.port || (parsed.protocol.startsWith('postgres') ? 5432 : 6379)}`;
}

/**
 * Postgres answers when a connection gets any reply from the server: a missing database (created
 * next) or a refused login is the server speaking, and the step after this one reports it in
 * full. Only "cannot connect" and "the server is starting" (57P03) mean "not yet".
 */
async function postgresAnswers(url: string, timeoutMs: number): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: Math.max(100, timeoutMs) });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return true;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && code !== '57P03';
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function redisAnswers(target: Config['redis'], timeoutMs: number): Promise<boolean> {
  const once = { connectTimeout: Math.max(100, timeoutMs), maxRetriesPerRequest: 0, enableOfflineQueue: false };
  const redis = target.cluster
    ? new Cluster(
        target.url.split(',').map((u) => ({ host: new URL(u.trim()).hostname, port: Number(new URL(u.trim()).port || 6379) })),
        { lazyConnect: true, redisOptions: once, clusterRetryStrategy: () => null, enableOfflineQueue: false },
      )
    : new Redis(target.url, { ...once, lazyConnect: true, retryStrategy: () => null });
  redis.on('error', () => undefined); // a failed attempt is the answer, not something to print
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/** Retries `probe` until it says yes or the deadline passes; pauses grow from 100 ms to 1 s. */
async function answersBy(probe: (timeoutMs: number) => Promise<boolean>, deadline: number): Promise<boolean> {
  for (let pause = 100; ; pause = Math.min(pause * 2, 1000)) {
    const left = deadline - Date.now();
    if (await probe(Math.min(2000, Math.max(left, 100)))) return true;
    if (Date.now() + pause >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/**
 * Resolves once both answer; throws DependencyUnavailable after `config.bootTimeoutMs`.
 * `migrating`: the first connection will go to the maintenance database beside
 * DATABASE_MIGRATION_URL (the service's own database may not exist yet).
 */
export async function waitForDependencies(config: Config, logger: Logger, migrating: boolean): Promise<void> {
  const pgUrl = migrating ? splitDatabaseUrl(config.migrationDatabaseUrl).adminUrl : config.databaseUrl;
  const deadline = Date.now() + config.bootTimeoutMs;
  const waiting = setTimeout(
    () => logger.info({ timeoutMs: config.bootTimeoutMs }, 'waiting for Postgres and Redis to answer'),
    Math.min(1000, config.bootTimeoutMs),
  );
  try {
    const [postgres, redis] = await Promise.all([
      answersBy((ms) => postgresAnswers(pgUrl, ms), deadline),
      answersBy((ms) => redisAnswers(config.redis, ms), deadline),
    ]);
    const down = [...(postgres ? [] : [`Postgres (${where(pgUrl)})`]), ...(redis ? [] : [`Redis (${where(config.redis.url)})`])];
    if (down.length)
      throw new StartupRefused(
        `${down.join(' and ')} did not answer within ${config.bootTimeoutMs} ms (BOOT_TIMEOUT_MS): ${START_HINT}`,
        69,
      );
  } finally {
    clearTimeout(waiting);
  }
}
