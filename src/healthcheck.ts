import { Client } from 'pg';
import { Cluster, Redis } from 'ioredis';
import { loadConfig } from './config/config';

/**
 * Container health check of the worker tier, which serves no HTTP: exits 0 when Postgres
 * and Redis answer within two seconds, 1 otherwise. `node dist/healthcheck.js`.
 */
async function main(): Promise<number> {
  const config = loadConfig();
  const pg = new Client({ connectionString: config.databaseUrl, connectionTimeoutMillis: 2000 });
  const probe = { connectTimeout: 2000, maxRetriesPerRequest: 0 };
  const redis = config.redis.cluster
    ? new Cluster(
        config.redis.url.split(',').map((u) => ({ host: new URL(u).hostname, port: Number(new URL(u).port || 6379) })),
        { lazyConnect: true, redisOptions: probe, clusterRetryStrategy: () => null },
      )
    : new Redis(config.redis.url, { ...probe, lazyConnect: true, retryStrategy: () => null });
  redis.on('error', () => undefined); // the failed connect is the answer, not something to print
  try {
    await pg.connect();
    await pg.query('select 1');
    await redis.connect();
    await redis.ping();
    return 0;
  } catch {
    return 1;
  } finally {
    await pg.end().catch(() => undefined);
    redis.disconnect();
  }
}

main().then(
  (code) => process.exit(code),
  () => process.exit(1),
);
