import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';

/**
 * The two kinds of Redis connection the BullMQ production guide asks for:
 * - `producer`: offline queue off, so a command fails at once while Redis is down and the
 *   API answers 503 instead of hanging;
 * - `worker`: retries forever (`maxRetriesPerRequest: null`), as blocking workers require.
 */
export function createRedis(url: string, kind: 'producer' | 'worker', logger: Logger): Redis {
  const options: RedisOptions =
    kind === 'producer'
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000 }
      : { maxRetriesPerRequest: null, enableReadyCheck: true };
  const redis = new Redis(url, {
    ...options,
    lazyConnect: false,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
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

/** Resolves when the connection is ready, or after `ms` (then the caller decides). */
export function redisReady(redis: Redis, ms: number): Promise<boolean> {
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
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'ready') await redis.quit();
  else redis.disconnect();
}
