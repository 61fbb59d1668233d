import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { z } from 'zod';
import { passwordProblem } from '../domain/identity/password-policy';
import { STREAM_RESUME_WINDOW_HOURS, type RetentionAges } from '../domain/retention/retention-ages';
import { ALL_QUEUES, type QueueName } from '../jobs/queues';
import { compileTrust } from '../platform/client-address';
import type { RedisTarget } from '../platform/redis';
import { DATA_KEY_ID, type DataKey } from '../platform/secret-box';

/**
 * Configuration comes only from environment variables and is
 * validated once at start-up: a bad value stops the process with a message naming the
 * variable, instead of failing later in the middle of a request.
 */

const booleanText = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'], { message: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const integerText = (min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, { message: `must be a whole number from ${min} to ${max}` })
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(min, { message: `must be at least ${min}` })
        .max(max, { message: `must be at most ${max}` }),
    );

function protocolOf(url: string): string {
  try {
    return new URL(url).protocol;
  } catch {
    return '';
  }
}

const urlText = (protocols: string[]) =>
  z.string().refine(
    (v) => {
      try {
        return protocols.includes(new URL(v).protocol);
      } catch {
        return false;
      }
    },
    { message: `must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}` },
  );

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  ROLE: z.enum(['all', 'api', 'worker'], { message: 'must be all, api or worker' }).default('all'),
  DATABASE_URL: urlText(['postgres:', 'postgresql:']).default('postgres://postgres@127.0.0.1:5432/trading'),
  DATABASE_MIGRATION_URL: urlText(['postgres:', 'postgresql:']).optional(),
  // A streaming replica of DATABASE_URL's server for the heavy reads (src/db/read-replica.ts).
  DATABASE_REPLICA_URL: urlText(['postgres:', 'postgresql:']).optional(),
  REPLICA_MAX_LAG_MS: integerText(0, 600000).default(5000),
  REPLICA_WAIT_MS: integerText(0, 60000).default(1000),
  // One URL, or for a cluster (REDIS_CLUSTER) its seed nodes, comma-separated.
  REDIS_URL: z
    .string()
    .refine((v) => v.split(',').every((u) => ['redis:', 'rediss:'].includes(protocolOf(u.trim()))), {
      message: 'must be a URL starting with redis:// or rediss:// (comma-separated seed nodes with REDIS_CLUSTER)',
    })
    .default('redis://127.0.0.1:6379'),
  REDIS_CLUSTER: booleanText.default(false),
  PORT: integerText(0, 65535).default(8000),
  HOST: z
    .string()
    .refine(
      (v) =>
        isIP(v) !== 0 ||
        /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(v),
      {
        message: 'must be an IP address (0.0.0.0, 127.0.0.1, ::) or a host name',
      },
    )
    .default('0.0.0.0'),
  WORKER_HTTP_PORT: integerText(0, 65535).default(9100),
  // A Bearer token Prometheus sends; long and plain enough to sit in a header and resist guessing.
  METRICS_TOKEN: z
    .string()
    .regex(/^[\x21-\x7e]{16,256}$/, { message: 'must be 16 to 256 printable characters without spaces' })
    .optional(),
  // Production keeps /metrics closed without METRICS_TOKEN; this opens it to anyone who reaches the port.
  METRICS_PUBLIC: booleanText.optional(),
  BOOT_TIMEOUT_MS: integerText(0, 600000).default(30000),
  SMTP_URL: urlText(['smtp:', 'smtps:']).optional(),
  MAIL_FROM: z.string().min(3).default('Trading Back Office <no-reply@broker.invalid>'),
  JWT_SECRET: z.string().min(32, { message: 'must be at least 32 characters' }).optional(),
  JWT_SECRET_FILE: z.string().min(1).optional(),
  // `id:base64key` pairs, comma-separated: the first seals secrets at rest, all of them open (parseDataKeys).
  DATA_ENCRYPTION_KEYS: z.string().max(10_000).optional(),
  JWT_ISSUER: z.string().min(1).default('trading-api'),
  JWT_AUDIENCE: z.string().min(1).default('trading-api'),
  ACCESS_TOKEN_TTL_SECONDS: integerText(60, 86400).default(900),
  // In a Redis Cluster the prefix must be a hash tag, `{trading}`: all keys then share one slot.
  QUEUE_PREFIX: z
    .string()
    .regex(/^(\{[A-Za-z0-9_-]{1,62}\}|[A-Za-z0-9_-]{1,64})$/, {
      message: 'must be 1 to 64 letters, digits, _ or -, or such a name in braces ({trading}) for a Redis Cluster',
    })
    .default('trading'),
  BOOTSTRAP_ADMIN_EMAIL: z.email({ message: 'must be an email address' }).optional(),
  BOOTSTRAP_ADMIN_PASSWORD: z.string().min(12, { message: 'must be at least 12 characters' }).optional(),
  WEBHOOKS_ALLOW_PRIVATE_URLS: booleanText.default(false),
  WEBHOOK_TIMEOUT_MS: integerText(500, 60000).default(10000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  WORKER_CONCURRENCY: integerText(1, 256).default(8),
  WORKER_QUEUES: z.string().max(1000).optional(),
  SHUTDOWN_GRACE_MS: integerText(0, 600000).default(25000),
  WORKER_LOCK_MS: integerText(1000, 600000).default(30000),
  BULK_CLOSE_WAIT_MS: integerText(0, 600000).default(30000),
  EOD_STEP_BATCH_SIZE: integerText(1, 100000).default(250),
  RISK_PREVIEW_WAIT_MS: integerText(1, 600000).default(30000),
  OUTBOX_RELAY_INTERVAL_MS: integerText(100, 60000).default(1000),
  OUTBOX_RELAY_BATCH_SIZE: integerText(1, 10000).default(500),
  MAIL_REQUEUE_AFTER_SECONDS: integerText(1, 86400).default(60),
  // Retention ages in hours (ten years at most); the outbox's lower bound is checked below, naming its reason.
  OUTBOX_RETENTION_HOURS: integerText(1, 87600).default(720),
  INBOX_RETENTION_HOURS: integerText(1, 87600).default(168),
  WEBHOOK_DELIVERY_RETENTION_HOURS: integerText(1, 87600).default(720),
  MAIL_RETENTION_HOURS: integerText(1, 87600).default(720),
  // A report's file is kept at least 7 days.
  REPORT_RETENTION_DAYS: integerText(7, 3650).default(7),
  PASSWORD_RESET_URL: urlText(['https:', 'http:']).default('https://portal.broker.invalid/reset-password'),
  REGISTRATION_CONFIRM_URL: urlText(['https:', 'http:']).default('https://portal.broker.invalid/confirm-signup'),
  SUPPORT_CONVERSATION_URL: urlText(['https:', 'http:']).default('https://portal.broker.invalid/conversations'),
  BODY_LIMIT_BYTES: integerText(1024, 50 * 1024 * 1024).default(1024 * 1024),
  DASHBOARD_IDLE_TIMEOUT_SECONDS: integerText(1, 86400).default(1800),
  DASHBOARD_SESSION_MAX_SECONDS: integerText(1, 7 * 86400).default(8 * 3600),
  DASHBOARD_COOKIE_SECURE: booleanText.optional(),
  TRUST_PROXY: z
    .string()
    .min(1)
    .max(500)
    .refine(
      (v) => {
        try {
          compileTrust(v);
          return true;
        } catch {
          return false;
        }
      },
      {
        message:
          'must be none, a hop count, or a comma-separated list of addresses, CIDR ranges, loopback, linklocal or uniquelocal',
      },
    )
    .default('loopback'),
});

/** Every environment variable the service reads: the configuration table of docs/operations.md lists exactly these (a test checks). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(EnvSchema.shape);

/** Variables whose values must never be echoed back, not even in an error message. */
const SECRET_VARIABLES = new Set([
  'JWT_SECRET',
  'METRICS_TOKEN',
  'DATA_ENCRYPTION_KEYS',
  'BOOTSTRAP_ADMIN_PASSWORD',
  'DATABASE_URL',
  'DATABASE_MIGRATION_URL',
  'DATABASE_REPLICA_URL',
  'REDIS_URL',
  'SMTP_URL',
]);

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

export interface Config {
  env: 'development' | 'test' | 'production';
  role: 'all' | 'api' | 'worker';
  databaseUrl: string;
  /** Where migrations run: a direct (session) connection when DATABASE_URL goes through PgBouncer in transaction mode. */
  migrationDatabaseUrl: string;
  /** The read replica heavy reads go to, how far behind it may be, how long a read waits for it; undefined: none. */
  replica: { url: string; maxLagMs: number; waitMs: number } | undefined;
  redis: RedisTarget;
  port: number;
  /** The address the API and a worker's HTTP listener bind. */
  host: string;
  /** Where a ROLE=worker process answers /health and /metrics (0 picks a free port). */
  workerHttpPort: number;
  /** When set, /metrics answers only a request bearing it (`Authorization: Bearer <token>`). */
  metricsToken: string | undefined;
  /**
   * Whether /metrics answers without METRICS_TOKEN when none is set: METRICS_PUBLIC, by default
   * everywhere but production (queue backlogs and error rates are the broker's business).
   */
  metricsPublic: boolean;
  /** How long start-up waits for Postgres and Redis to answer before it gives up, naming them. */
  bootTimeoutMs: number;
  smtpUrl: string | undefined;
  mailFrom: string;
  jwt: { secret: string; issuer: string; audience: string; ephemeral: boolean };
  /**
   * The keys secrets at rest are sealed under (DATA_ENCRYPTION_KEYS), the sealing one first;
   * undefined outside production when unset: the database's development key is used then.
   */
  dataKeys: readonly DataKey[] | undefined;
  accessTokenTtlSeconds: number;
  queuePrefix: string;
  bootstrapAdmin: { email: string; password: string } | undefined;
  webhooksAllowPrivateUrls: boolean;
  /** The longest one webhook delivery attempt may take, connect to last byte (connecting alone: at most 5 s of it). */
  webhookTimeoutMs: number;
  logLevel: string;
  workerConcurrency: number;
  /** The queues a worker process serves (WORKER_QUEUES; all by default), each with its concurrency. */
  workerQueues: ReadonlyArray<{ queue: QueueName; concurrency: number }>;
  shutdownGraceMs: number;
  /** How long a worker holds a job before another may take it over (stalled-job recovery). */
  workerLockMs: number;
  /** How long POST /orders/bulk-close waits for its result before answering 202. */
  bulkCloseWaitMs: number;
  /** How many items an end-of-day whole-run step (the partners' daily payment) settles per transaction. */
  eodStepBatchSize: number;
  riskPreviewWaitMs: number;
  /** How often the outbox relay runs, and how many events one of its transactions hands over. */
  outboxRelay: { intervalMs: number; batchSize: number };
  /** A mail still queued this long after its last touch has its send job re-added by the relay. */
  mailRequeueAfterSeconds: number;
  /** How long rows nothing needs any more are kept before the retention job deletes them. */
  retention: RetentionAges;
  /** The customer portal page a reset mail links to, with `?token=<token>` appended. */
  passwordResetUrl: string;
  /** The customer portal page a registration mail links to, with `?token=<token>` appended. */
  registrationConfirmUrl: string;
  /** The customer portal page of support conversations: a reply mail links to it with `/<conversation id>` appended. */
  supportConversationUrl: string;
  bodyLimitBytes: number;
  /**
   * The queue dashboard's sign-in: idle and absolute lifetimes of its session, and whether its
   * cookie is `Secure` (DASHBOARD_COOKIE_SECURE; by default everywhere but development, as a
   * browser drops a Secure cookie set over plain http from any host but localhost).
   */
  dashboard: { idleSeconds: number; absoluteSeconds: number; cookieSecure: boolean };
  /** Which hops may set X-Forwarded-For (the client address sessions and the login throttle see); see compileTrust. */
  trustProxy: string;
}

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env): Config {
  // An empty variable means "unset": compose files and shells often export FOO= .
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = EnvSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0]);
        const shown = SECRET_VARIABLES.has(name) ? '' : ` (got ${JSON.stringify(present[name])})`;
        return `${name}: ${issue.message}${shown}`;
      }),
    );
  }
  const e = parsed.data;
  const problems: string[] = [];

  let secret = e.JWT_SECRET;
  if (e.JWT_SECRET && e.JWT_SECRET_FILE) problems.push('JWT_SECRET_FILE: set either JWT_SECRET or JWT_SECRET_FILE, not both');
  if (!secret && e.JWT_SECRET_FILE) {
    try {
      secret = readFileSync(e.JWT_SECRET_FILE, 'utf8').trim();
      if (secret.length < 32) problems.push('JWT_SECRET_FILE: the key file must hold at least 32 characters');
    } catch {
      problems.push(`JWT_SECRET_FILE: cannot read ${e.JWT_SECRET_FILE}`);
    }
  }
  const ephemeral = !secret;
  if (ephemeral && e.NODE_ENV === 'production') {
    problems.push('JWT_SECRET: required in production (or JWT_SECRET_FILE)');
  }
  const dataKeys = e.DATA_ENCRYPTION_KEYS === undefined ? undefined : parseDataKeys(e.DATA_ENCRYPTION_KEYS, problems);
  if (e.DATA_ENCRYPTION_KEYS === undefined && e.NODE_ENV === 'production') {
    problems.push('DATA_ENCRYPTION_KEYS: required in production (id:base64key pairs, comma-separated; the first one seals)');
  }
  if (e.BOOTSTRAP_ADMIN_EMAIL && e.BOOTSTRAP_ADMIN_PASSWORD) {
    const weak = passwordProblem(e.BOOTSTRAP_ADMIN_PASSWORD, { email: e.BOOTSTRAP_ADMIN_EMAIL });
    if (weak) problems.push(`BOOTSTRAP_ADMIN_PASSWORD: ${weak}`);
  }
  if (Boolean(e.BOOTSTRAP_ADMIN_EMAIL) !== Boolean(e.BOOTSTRAP_ADMIN_PASSWORD)) {
    const missing = e.BOOTSTRAP_ADMIN_EMAIL ? 'BOOTSTRAP_ADMIN_PASSWORD' : 'BOOTSTRAP_ADMIN_EMAIL';
    problems.push(`${missing}: BOOTSTRAP_ADMIN_EMAIL and BOOTSTRAP_ADMIN_PASSWORD go together`);
  }
  const workerQueues = parseWorkerPools(present, e.WORKER_QUEUES, e.WORKER_CONCURRENCY, problems);
  if (e.REDIS_CLUSTER && !e.QUEUE_PREFIX.startsWith('{'))
    problems.push(
      'QUEUE_PREFIX: with REDIS_CLUSTER it must be a hash tag such as {trading}, so each script finds its keys in one slot',
    );
  if (e.OUTBOX_RETENTION_HOURS < STREAM_RESUME_WINDOW_HOURS)
    problems.push(
      `OUTBOX_RETENTION_HOURS: must be at least ${STREAM_RESUME_WINDOW_HOURS}, the window in which a stream resumes with Last-Event-ID (got ${e.OUTBOX_RETENTION_HOURS})`,
    );
  if (problems.length > 0) throw new ConfigError(problems);

  return Object.freeze({
    env: e.NODE_ENV,
    role: e.ROLE,
    databaseUrl: e.DATABASE_URL,
    migrationDatabaseUrl: e.DATABASE_MIGRATION_URL ?? e.DATABASE_URL,
    replica: e.DATABASE_REPLICA_URL
      ? { url: e.DATABASE_REPLICA_URL, maxLagMs: e.REPLICA_MAX_LAG_MS, waitMs: e.REPLICA_WAIT_MS }
      : undefined,
    redis: { url: e.REDIS_URL, cluster: e.REDIS_CLUSTER },
    port: e.PORT,
    host: e.HOST,
    workerHttpPort: e.WORKER_HTTP_PORT,
    metricsToken: e.METRICS_TOKEN,
    metricsPublic: e.METRICS_PUBLIC ?? e.NODE_ENV !== 'production',
    bootTimeoutMs: e.BOOT_TIMEOUT_MS,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    // Outside production a missing secret is replaced at start by the development key kept in
    // the database (see developmentJwtSecret); this random one is only a placeholder until then.
    jwt: { secret: secret ?? randomBytes(32).toString('base64url'), issuer: e.JWT_ISSUER, audience: e.JWT_AUDIENCE, ephemeral },
    dataKeys,
    accessTokenTtlSeconds: e.ACCESS_TOKEN_TTL_SECONDS,
    queuePrefix: e.QUEUE_PREFIX,
    bootstrapAdmin:
      e.BOOTSTRAP_ADMIN_EMAIL && e.BOOTSTRAP_ADMIN_PASSWORD
        ? { email: e.BOOTSTRAP_ADMIN_EMAIL, password: e.BOOTSTRAP_ADMIN_PASSWORD }
        : undefined,
    webhooksAllowPrivateUrls: e.WEBHOOKS_ALLOW_PRIVATE_URLS,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT_MS,
    logLevel: e.LOG_LEVEL,
    workerConcurrency: e.WORKER_CONCURRENCY,
    workerQueues,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    workerLockMs: e.WORKER_LOCK_MS,
    bulkCloseWaitMs: e.BULK_CLOSE_WAIT_MS,
    eodStepBatchSize: e.EOD_STEP_BATCH_SIZE,
    riskPreviewWaitMs: e.RISK_PREVIEW_WAIT_MS,
    outboxRelay: { intervalMs: e.OUTBOX_RELAY_INTERVAL_MS, batchSize: e.OUTBOX_RELAY_BATCH_SIZE },
    mailRequeueAfterSeconds: e.MAIL_REQUEUE_AFTER_SECONDS,
    retention: {
      outboxHours: e.OUTBOX_RETENTION_HOURS,
      inboxHours: e.INBOX_RETENTION_HOURS,
      webhookDeliveryHours: e.WEBHOOK_DELIVERY_RETENTION_HOURS,
      mailHours: e.MAIL_RETENTION_HOURS,
      reportDays: e.REPORT_RETENTION_DAYS,
    },
    passwordResetUrl: e.PASSWORD_RESET_URL,
    supportConversationUrl: e.SUPPORT_CONVERSATION_URL,
    registrationConfirmUrl: e.REGISTRATION_CONFIRM_URL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    trustProxy: e.TRUST_PROXY,
    dashboard: {
      idleSeconds: e.DASHBOARD_IDLE_TIMEOUT_SECONDS,
      absoluteSeconds: e.DASHBOARD_SESSION_MAX_SECONDS,
      cookieSecure: e.DASHBOARD_COOKIE_SECURE ?? e.NODE_ENV !== 'development',
    },
  });
}

/**
 * DATA_ENCRYPTION_KEYS: `id:base64key` pairs, comma-separated, each key exactly 32 bytes
 * (`openssl rand -base64 32`). Problems name the pair by its id or position, never a key.
 */
function parseDataKeys(text: string, problems: string[]): DataKey[] | undefined {
  const keys: DataKey[] = [];
  const pairs = text.split(',').map((p) => p.trim());
  pairs.forEach((pair, index) => {
    const colon = pair.indexOf(':');
    const id = colon < 0 ? '' : pair.slice(0, colon);
    const value = colon < 0 ? '' : pair.slice(colon + 1);
    const where = `pair ${index + 1}`;
    if (!DATA_KEY_ID.test(id)) {
      problems.push(`DATA_ENCRYPTION_KEYS: ${where} must be id:base64key, the id 1 to 32 letters, digits, _ or -`);
      return;
    }
    const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(value) ? Buffer.from(value, 'base64') : Buffer.alloc(0);
    if (key.length !== 32)
      problems.push(`DATA_ENCRYPTION_KEYS: key "${id}" must be 32 bytes in base64 (openssl rand -base64 32)`);
    else if (keys.some((k) => k.id === id)) problems.push(`DATA_ENCRYPTION_KEYS: key id "${id}" appears twice`);
    else keys.push({ id, key });
  });
  return keys.length === pairs.length ? keys : undefined;
}

/** `WORKER_CONCURRENCY_<QUEUE>`: the queue's name in capitals, `-` written `_` (bulk-close: WORKER_CONCURRENCY_BULK_CLOSE). */
export function concurrencyVariable(queue: string): string {
  return `WORKER_CONCURRENCY_${queue.toUpperCase().replace(/-/g, '_')}`;
}

/**
 * Worker pools: WORKER_QUEUES picks the queues a worker process
 * serves (comma-separated, all by default) and WORKER_CONCURRENCY_<QUEUE> overrides
 * WORKER_CONCURRENCY for one queue. An unknown queue name, in either, stops start-up naming
 * it: a typo would otherwise leave a queue without workers, silently.
 */
function parseWorkerPools(
  env: Record<string, string | undefined>,
  list: string | undefined,
  fallback: number,
  problems: string[],
): Array<{ queue: QueueName; concurrency: number }> {
  const known = new Set<string>(ALL_QUEUES);
  const wanted =
    list === undefined
      ? [...ALL_QUEUES]
      : list
          .split(',')
          .map((q) => q.trim())
          .filter(Boolean);
  for (const q of wanted)
    if (!known.has(q)) problems.push(`WORKER_QUEUES: unknown queue "${q}" (the queues are ${ALL_QUEUES.join(', ')})`);
  if (list !== undefined && wanted.length === 0) problems.push('WORKER_QUEUES: names no queue');
  const variables = new Map(ALL_QUEUES.map((q) => [concurrencyVariable(q), q]));
  for (const name of Object.keys(env).filter((k) => k.startsWith('WORKER_CONCURRENCY_'))) {
    if (!variables.has(name)) {
      problems.push(`${name}: no queue by that name (the queues are ${ALL_QUEUES.join(', ')})`);
      continue;
    }
    const value = env[name]!;
    if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 256)
      problems.push(`${name}: must be a whole number from 1 to 256 (got ${JSON.stringify(value)})`);
  }
  return [...new Set(wanted)]
    .filter((q): q is QueueName => known.has(q))
    .map((queue) => {
      const own = env[concurrencyVariable(queue)];
      return { queue, concurrency: own !== undefined && /^\d+$/.test(own) ? Number(own) : fallback };
    });
}
