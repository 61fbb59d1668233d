import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { Queue } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import type { RedisClient } from '../../src/platform/redis';
import type { RouteSpec } from '../../src/api/http/route';
import type { EventConsumer } from '../../src/domain/events/consumers';
import type { JobDefinition } from '../../src/jobs/job-definition';
import { loadConfig, type Config } from '../../src/config/config';
import { ALL_QUEUES } from '../../src/jobs/queues';
import { createLogger } from '../../src/platform/logger';
import { startRuntime, type Runtime } from '../../src/runtime';
import type { Processor } from '../../src/workers/processor';
import { ADMIN } from './identity';
import { PRISM_DOCUMENT, startPrismProxy, violationsOf, type PrismProxy } from './prism-proxy';
import { TEST_PROCESS_ENV } from './test-env';
import {
  cloneTemplateDatabase,
  databaseUrl,
  directDatabaseUrl,
  dropDatabase,
  replicaDatabaseUrl,
  replicaHasDatabase,
  runId,
} from './test-database';

export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** TEST_REDIS_CLUSTER=true: REDIS_URL names a Redis Cluster's seed nodes (scripts/cluster-check.sh). */
export const REDIS_CLUSTER = process.env.TEST_REDIS_CLUSTER === 'true';

/**
 * A queue prefix of this test's own; a hash tag in a cluster, as the service requires there.
 * It carries the run's id, so the run's teardown can find whatever a crashed file left.
 */
export function testQueuePrefix(): string {
  const name = `test-${runId()}-${randomBytes(6).toString('hex')}`;
  return REDIS_CLUSTER ? `{${name}}` : name;
}

/** Deletes every key matching `pattern` (a SCAN glob), on every master of a cluster. */
export async function deleteKeys(pattern: string): Promise<void> {
  const connection = testRedis();
  try {
    const nodes = connection instanceof Cluster ? connection.nodes('master') : [connection];
    for (const node of nodes) {
      for await (const keys of node.scanStream({ match: pattern, count: 500 }) as AsyncIterable<string[]>) {
        // One key at a time in a cluster: a multi-key UNLINK must stay within one slot.
        if (connection instanceof Cluster) for (const key of keys) await node.unlink(key);
        else if (keys.length > 0) await node.unlink(...keys);
      }
    }
  } finally {
    await connection.quit();
  }
}

/** A plain client of the test Redis (or cluster), for assertions and clean-up. */
export function testRedis(): RedisClient {
  return REDIS_CLUSTER
    ? new Cluster(
        REDIS_URL.split(',').map((u) => ({ host: new URL(u).hostname, port: Number(new URL(u).port) })),
        { redisOptions: { maxRetriesPerRequest: null } },
      )
    : new Redis(REDIS_URL, { maxRetriesPerRequest: null });
}

export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as-is, for malformed JSON and size tests. */
  rawBody?: string;
  token?: string;
  headers?: Record<string, string>;
}

export interface TestApp {
  runtime: Runtime;
  config: Config;
  baseUrl: string;
  databaseName: string;
  /** Every log line the app wrote, parsed. */
  logs: Array<Record<string, unknown>>;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<TestResponse<T>>;
  stop(): Promise<void>;
}

export interface TestAppOptions {
  /** A label for the database name (usually the test file). */
  label?: string;
  env?: Record<string, string>;
  routes?: RouteSpec[];
  processors?: Processor[];
  /** Event consumers to register beside the shipped ones (see test-consumers.ts). */
  consumers?: EventConsumer[];
  extraJobs?: Array<{ definition: JobDefinition; processor: Processor }>;
  /** Reuse another app's database and queue prefix (a second instance of one deployment). */
  shareWith?: TestApp;
  /** Reach the app through Prism's validation proxy with this OpenAPI file (default: TEST_PRISM_DOCUMENT). */
  prismDocument?: string;
}

/** The served OpenAPI text the global setup built for this run, if it did (see openapi-text.ts). */
function runOpenApiText(): string | undefined {
  const file = process.env.TEST_OPENAPI_TEXT_FILE;
  return file ? readFileSync(file, 'utf8') : undefined;
}

/**
 * Starts the real service in-process on port 0 against its own database (cloned from the
 * migrated template) and its own queue prefix, with logs captured for assertions.
 */
export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const shared = options.shareWith;
  const databaseName = shared?.databaseName ?? (await cloneTemplateDatabase(options.label ?? 'app'));
  // Under scripts/replica-check.sh the heavy reads go to a streaming replica of the test server.
  const replicaUrl = replicaDatabaseUrl(databaseName);
  if (replicaUrl) await replicaHasDatabase(databaseName);
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    DATABASE_URL: databaseUrl(databaseName),
    // Behind a pooler in transaction mode, what needs a session (the outbox wake's LISTEN) connects directly.
    DATABASE_MIGRATION_URL: directDatabaseUrl(databaseName),
    ...(replicaUrl ? { DATABASE_REPLICA_URL: replicaUrl } : {}),
    REDIS_URL,
    ...(REDIS_CLUSTER ? { REDIS_CLUSTER: 'true' } : {}),
    QUEUE_PREFIX: shared?.config.queuePrefix ?? testQueuePrefix(),
    JWT_SECRET: shared?.config.jwt.secret ?? randomBytes(32).toString('base64url'),
    LOG_LEVEL: 'info',
    WORKER_CONCURRENCY: '4',
    SHUTDOWN_GRACE_MS: '5000',
    WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
    BOOTSTRAP_ADMIN_EMAIL: ADMIN.email,
    BOOTSTRAP_ADMIN_PASSWORD: ADMIN.password,
    ...TEST_PROCESS_ENV,
    ...options.env,
  });
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  let runtime: Runtime;
  try {
    runtime = await startRuntime(config, {
      logger: createLogger(config.logLevel, sink),
      skipMigrations: true,
      defaultMetrics: false,
      routes: options.routes,
      openApiText: options.routes ? undefined : runOpenApiText(),
      processors: options.processors,
      consumers: options.consumers,
      extraJobs: options.extraJobs,
    });
  } catch (err) {
    if (!shared) await dropDatabase(databaseName);
    throw err;
  }
  const directUrl = runtime.port !== undefined ? `http://127.0.0.1:${runtime.port}` : '';
  // TEST_PRISM_DOCUMENT: reach the app through Prism's validation proxy (scripts/prism-check.sh).
  let prism: PrismProxy | undefined;
  const prismDocument = options.prismDocument ?? PRISM_DOCUMENT;
  if (prismDocument && directUrl) {
    try {
      prism = await startPrismProxy(directUrl, prismDocument);
    } catch (err) {
      await runtime.stop();
      if (!shared) await dropDatabase(databaseName);
      throw err;
    }
  }
  const baseUrl = prism?.url ?? directUrl;

  let stopped = false;
  return {
    runtime,
    config,
    baseUrl,
    databaseName,
    logs,
    request: (method, path, opts = {}) => request(baseUrl, method, path, opts, prism !== undefined),
    async stop() {
      if (stopped) return;
      stopped = true;
      await prism?.stop();
      await runtime.stop();
      if (!shared) {
        await obliterateQueues(config.queuePrefix);
        await dropDatabase(databaseName);
      }
    },
  };
}

async function request(
  baseUrl: string,
  method: string,
  path: string,
  opts: RequestOptions,
  throughPrism = false,
): Promise<TestResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body });
  // An event stream never ends on its own: its status and headers are the answer (openSse reads streams).
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, headers: res.headers, body: '', text: '' };
  }
  const text = await res.text();
  if (throughPrism) {
    const violations = violationsOf(method, path, res.status, res.headers.get('sl-violations'));
    if (violations.length) throw new Error(`the answer or the request breaks the OpenAPI document:\n${violations.join('\n')}`);
  }
  let parsed: unknown = text;
  if ((res.headers.get('content-type') ?? '').includes('json') && text) parsed = JSON.parse(text);
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/** Removes every key of a test's queue prefix, as BullMQ's own tests do. */
export async function obliterateQueues(prefix: string): Promise<void> {
  const connection = testRedis();
  try {
    for (const name of ALL_QUEUES) {
      const queue = new Queue(name, { connection, prefix });
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
    }
  } finally {
    await connection.quit();
  }
  // The service's own keys under the prefix (sessions, throttles, stream slots) go too.
  await deleteKeys(`${prefix}:*`);
}

/** Waits until `check` returns a truthy value, failing with `what` after the deadline. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | null | false>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Runs SQL against a test app's own database, for assertions about stored state. */
export async function sql<T = Record<string, unknown>>(app: TestApp, query: string, params: unknown[] = []): Promise<T[]> {
  return app.runtime.services.orm.em.fork().getConnection().execute<T[]>(query, params);
}

/**
 * Waits until the clock has moved past `instant` (an ISO time or epoch milliseconds), so that a
 * row written next gets a later millisecond timestamp.
 */
export async function clockPast(instant: string | number): Promise<void> {
  const at = typeof instant === 'number' ? instant : Date.parse(instant);
  await waitFor(`the clock to pass ${new Date(at).toISOString()}`, async () => Date.now() > at + 1, 1000);
}
