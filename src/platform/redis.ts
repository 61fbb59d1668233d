import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';

/**
 * One Redis or a Redis Cluster (REDIS_CLUSTER=true: REDIS_URL then names one or more seed
 * nodes, comma-separated). Every key the service writes starts with QUEUE_PREFIX; in a
 * cluster the prefix must be a hash tag (`{trading}`), so that BullMQ's multi-key scripts
 * and ours (the login throttle, the auth cache) find all their keys in one slot.
 */
export type RedisClient = Redis | Cluster;

export interface RedisTarget {
  url: string;
  cluster: boolean;
}

function seeds(url: string): Array<{ host: string; port: number }> {
  return url.split(',').map((u) => {
    const parsed = new URL(u.trim());
    return { host: parsed.hostname, port: Number(parsed.port || 6379) };
  });
}

/** Password and TLS of a cluster come from its first seed URL, and apply to every node. */
function nodeOptions(url: string): RedisOptions {
  const first = new URL(url.split(',')[0]!.trim());
  return {
    ...(first.password ? { password: decodeURIComponent(first.password) } : {}),
    ...(first.username ? { username: decodeURIComponent(first.username) } : {}),
    ...(first.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/**
 * The kinds of Redis connection: the two the BullMQ production guide asks for, and one for
 * the per-request reads of the auth caches.
 * - `producer`: offline queue off, so a command fails at once while Redis is down and the
 *   API answers 503 instead of hanging;
 * - `worker`: retries forever (`maxRetriesPerRequest: null`), as blocking workers require;
 * - `auth`: a producer that auto-pipelines: the commands that concurrent requests issue in one
 *   turn of the event loop leave in one socket write, instead of a write system call each.
 *   BullMQ's connections do not use it (its scripts and blocking reads keep their own order).
 */
export function createRedis(target: RedisTarget, kind: 'producer' | 'worker' | 'auth', logger: Logger): RedisClient {
  const producer: RedisOptions = { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000 };
  const options: RedisOptions =
    kind === 'producer'
      ? producer
      : kind === 'auth'
        ? { ...producer, enableAutoPipelining: true }
        : { maxRetriesPerRequest: null, enableReadyCheck: true };
  const retryStrategy = (times: number) => Math.min(times * 200, 2000);
  // A cluster auto-pipelines itself, per node (every key of ours shares the prefix's hash tag,
  // so one slot); its node connections must not pipeline a second time.
  const { enableAutoPipelining = false, ...nodeLevel } = options;
  const redis: RedisClient = target.cluster
    ? new Cluster(seeds(target.url), {
        redisOptions: { ...nodeOptions(target.url), ...nodeLevel },
        enableOfflineQueue: options.enableOfflineQueue ?? true,
        enableAutoPipelining,
        clusterRetryStrategy: retryStrategy,
      } satisfies ClusterOptions)
    : new Redis(target.url, { ...options, lazyConnect: false, retryStrategy });
  let lastLogged = 0;
  redis.on('error', (err: Error) => {
    // ioredis emits an error on every failed reconnect; one line per 10 s is enough.
    const now = Date.now();
    if (now - lastLogged > 10_000) {
      lastLogged = now;
      logger.warn({ err: err.message, kind }, 'redis connection error');
    }
  });
  return redis;
}

/** A connection like `client` for blocking reads (QueueEvents): offline queue on, retries forever. */
export function duplicateForBlocking(client: RedisClient): RedisClient {
  const blocking = { maxRetriesPerRequest: null, enableOfflineQueue: true };
  if (client instanceof Cluster) {
    return client.duplicate([], { enableOfflineQueue: true, redisOptions: { ...client.options.redisOptions, ...blocking } });
  }
  return client.duplicate(blocking);
}

/** Resolves when the connection is ready, or after `ms` (then the caller decides). */
export function redisReady(redis: RedisClient, ms: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ok);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), ms);
    redis.once('ready', onReady);
  });
}

/**
 * Closes a connection: gracefully (QUIT) when it is up, at once when it is not; QUIT on a
 * connection that never came up would leave its reconnect timer running forever.
 */
export async function closeRedis(redis: RedisClient): Promise<void> {
  if (redis.status === 'ready') await redis.quit();
  else redis.disconnect();
}
