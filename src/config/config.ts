import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/**
 * Configuration comes only from environment variables (decisions, section 1) and is
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
  REDIS_URL: urlText(['redis:', 'rediss:']).default('redis://127.0.0.1:6379'),
  PORT: integerText(0, 65535).default(8000),
  SMTP_URL: urlText(['smtp:', 'smtps:']).optional(),
  MAIL_FROM: z.string().min(3).default('Trading Back Office <no-reply@broker.invalid>'),
  JWT_SECRET: z.string().min(32, { message: 'must be at least 32 characters' }).optional(),
  JWT_SECRET_FILE: z.string().min(1).optional(),
  JWT_ISSUER: z.string().min(1).default('trading-api'),
  JWT_AUDIENCE: z.string().min(1).default('trading-api'),
  ACCESS_TOKEN_TTL_SECONDS: integerText(60, 86400).default(900),
  QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, { message: 'must be 1 to 64 letters, digits, _ or -' })
    .default('trading'),
  BOOTSTRAP_ADMIN_EMAIL: z.email({ message: 'must be an email address' }).optional(),
  BOOTSTRAP_ADMIN_PASSWORD: z.string().min(12, { message: 'must be at least 12 characters' }).optional(),
  WEBHOOKS_ALLOW_PRIVATE_URLS: booleanText.default(false),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  WORKER_CONCURRENCY: integerText(1, 256).default(8),
  SHUTDOWN_GRACE_MS: integerText(0, 600000).default(25000),
  WORKER_LOCK_MS: integerText(1000, 600000).default(30000),
  BULK_CLOSE_WAIT_MS: integerText(0, 600000).default(30000),
  BODY_LIMIT_BYTES: integerText(1024, 50 * 1024 * 1024).default(1024 * 1024),
  TRUST_PROXY: z.string().min(1).max(500).default('loopback'),
});

/** Variables whose values must never be echoed back, not even in an error message. */
const SECRET_VARIABLES = new Set(['JWT_SECRET', 'BOOTSTRAP_ADMIN_PASSWORD', 'DATABASE_URL', 'REDIS_URL', 'SMTP_URL']);

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
  redisUrl: string;
  port: number;
  smtpUrl: string | undefined;
  mailFrom: string;
  jwt: { secret: string; issuer: string; audience: string; ephemeral: boolean };
  accessTokenTtlSeconds: number;
  queuePrefix: string;
  bootstrapAdmin: { email: string; password: string } | undefined;
  webhooksAllowPrivateUrls: boolean;
  logLevel: string;
  workerConcurrency: number;
  shutdownGraceMs: number;
  /** How long a worker holds a job before another may take it over (stalled-job recovery). */
  workerLockMs: number;
  /** How long POST /orders/bulk-close waits for its result before answering 202. */
  bulkCloseWaitMs: number;
  bodyLimitBytes: number;
  /** express 'trust proxy': which hops may set X-Forwarded-For (the client address throttling sees). */
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
  if (Boolean(e.BOOTSTRAP_ADMIN_EMAIL) !== Boolean(e.BOOTSTRAP_ADMIN_PASSWORD)) {
    const missing = e.BOOTSTRAP_ADMIN_EMAIL ? 'BOOTSTRAP_ADMIN_PASSWORD' : 'BOOTSTRAP_ADMIN_EMAIL';
    problems.push(`${missing}: BOOTSTRAP_ADMIN_EMAIL and BOOTSTRAP_ADMIN_PASSWORD go together`);
  }
  if (problems.length > 0) throw new ConfigError(problems);

  return Object.freeze({
    env: e.NODE_ENV,
    role: e.ROLE,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    port: e.PORT,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    // Outside production a missing secret gets a random one: tokens then die with the process.
    jwt: { secret: secret ?? randomBytes(32).toString('base64url'), issuer: e.JWT_ISSUER, audience: e.JWT_AUDIENCE, ephemeral },
    accessTokenTtlSeconds: e.ACCESS_TOKEN_TTL_SECONDS,
    queuePrefix: e.QUEUE_PREFIX,
    bootstrapAdmin:
      e.BOOTSTRAP_ADMIN_EMAIL && e.BOOTSTRAP_ADMIN_PASSWORD
        ? { email: e.BOOTSTRAP_ADMIN_EMAIL, password: e.BOOTSTRAP_ADMIN_PASSWORD }
        : undefined,
    webhooksAllowPrivateUrls: e.WEBHOOKS_ALLOW_PRIVATE_URLS,
    logLevel: e.LOG_LEVEL,
    workerConcurrency: e.WORKER_CONCURRENCY,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    workerLockMs: e.WORKER_LOCK_MS,
    bulkCloseWaitMs: e.BULK_CLOSE_WAIT_MS,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    trustProxy: e.TRUST_PROXY,
  });
}
