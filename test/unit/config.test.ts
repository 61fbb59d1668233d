import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../../src/config/config';
import { ALL_QUEUES } from '../../src/jobs/queues';
import { metricsAllowed } from '../../src/platform/metrics-access';

const KEY = randomBytes(32);
const KEYS = `k2:${KEY.toString('base64')}`;

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  test('when nothing is set, then the documented defaults apply', () => {
    const config = loadConfig({});
    expect(config.databaseUrl).toBe('postgres://postgres@127.0.0.1:5432/trading');
    expect(config.redis).toEqual({ url: 'redis://127.0.0.1:6379', cluster: false });
    expect(config.port).toBe(8000);
    expect(config.smtpUrl).toBeUndefined();
    expect(config.accessTokenTtlSeconds).toBe(900);
    expect(config.queuePrefix).toBe('trading');
    expect(config.role).toBe('all');
    expect(config.webhooksAllowPrivateUrls).toBe(false);
    expect(config.bootstrapAdmin).toBeUndefined();
    expect(config.jwt.ephemeral).toBe(true);
  });

  test('when values are given, then they are parsed into their types', () => {
    const config = loadConfig({
      PORT: '9100',
      ROLE: 'worker',
      ACCESS_TOKEN_TTL_SECONDS: '600',
      WEBHOOKS_ALLOW_PRIVATE_URLS: 'true',
      SMTP_URL: 'smtp://mail:1025',
      JWT_SECRET: 'x'.repeat(40),
      BOOTSTRAP_ADMIN_EMAIL: 'root@broker.test',
      BOOTSTRAP_ADMIN_PASSWORD: 'correct horse battery',
      QUEUE_PREFIX: 'run_42',
    });
    expect(config).toMatchObject({
      port: 9100,
      role: 'worker',
      accessTokenTtlSeconds: 600,
      webhooksAllowPrivateUrls: true,
      smtpUrl: 'smtp://mail:1025',
      queuePrefix: 'run_42',
      bootstrapAdmin: { email: 'root@broker.test', password: 'correct horse battery' },
    });
    expect(config.jwt.ephemeral).toBe(false);
  });

  test('when the dashboard variables are unset, then 30 minutes idle, 8 hours in all, and a Secure cookie outside development', () => {
    expect(loadConfig({}).dashboard).toEqual({ idleSeconds: 1800, absoluteSeconds: 28800, cookieSecure: false });
    expect(loadConfig({ NODE_ENV: 'test' }).dashboard.cookieSecure).toBe(true);
    expect(
      loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40), DATA_ENCRYPTION_KEYS: KEYS }).dashboard.cookieSecure,
    ).toBe(true);
    expect(
      loadConfig({
        NODE_ENV: 'production',
        JWT_SECRET: 'x'.repeat(40),
        DATA_ENCRYPTION_KEYS: KEYS,
        DASHBOARD_COOKIE_SECURE: 'false',
        DASHBOARD_IDLE_TIMEOUT_SECONDS: '600',
        DASHBOARD_SESSION_MAX_SECONDS: '3600',
      }).dashboard,
    ).toEqual({ idleSeconds: 600, absoluteSeconds: 3600, cookieSecure: false });
    expect(problemsOf({ DASHBOARD_IDLE_TIMEOUT_SECONDS: '0' })[0]).toMatch(/^DASHBOARD_IDLE_TIMEOUT_SECONDS: /);
  });

  test('when an empty string is exported, then it counts as unset', () => {
    expect(loadConfig({ PORT: '', SMTP_URL: '' }).port).toBe(8000);
  });

  test.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['ROLE', 'both'],
    ['DATABASE_URL', 'mysql://x/y'],
    ['REDIS_URL', 'not a url'],
    ['SMTP_URL', 'http://mail'],
    ['ACCESS_TOKEN_TTL_SECONDS', '10'],
    ['QUEUE_PREFIX', 'has:colon'],
    ['WEBHOOKS_ALLOW_PRIVATE_URLS', 'maybe'],
    ['BOOTSTRAP_ADMIN_EMAIL', 'nobody'],
    ['LOG_LEVEL', 'loud'],
  ])('when %s is %p, then start-up stops naming that variable', (name, value) => {
    const problems = problemsOf({
      [name]: value,
      ...(name === 'BOOTSTRAP_ADMIN_EMAIL' ? { BOOTSTRAP_ADMIN_PASSWORD: 'long enough pw' } : {}),
    });
    expect(problems.some((p) => p.startsWith(`${name}:`))).toBe(true);
  });

  test('when a secret is wrong, then the message names it without echoing its value', () => {
    const problems = problemsOf({ JWT_SECRET: 'short-secret-value' });
    expect(problems.join('\n')).toMatch(/^JWT_SECRET: /);
    expect(problems.join('\n')).not.toContain('short-secret-value');
  });

  test('when in production without a JWT secret, then start-up stops', () => {
    expect(problemsOf({ NODE_ENV: 'production', DATA_ENCRYPTION_KEYS: KEYS })).toEqual([
      expect.stringMatching(/^JWT_SECRET: required in production/),
    ]);
  });

  test('when in production without DATA_ENCRYPTION_KEYS, then start-up stops naming it', () => {
    expect(problemsOf({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40) })).toEqual([
      expect.stringMatching(/^DATA_ENCRYPTION_KEYS: required in production/),
    ]);
  });

  test('when DATA_ENCRYPTION_KEYS lists keys, then the first seals and every one is kept in order', () => {
    const second = randomBytes(32);
    const config = loadConfig({ DATA_ENCRYPTION_KEYS: `${KEYS}, old-1:${second.toString('base64url')}` });
    expect(config.dataKeys?.map((k) => k.id)).toEqual(['k2', 'old-1']);
    expect(config.dataKeys?.[1]?.key.equals(second)).toBe(true);
    expect(loadConfig({}).dataKeys).toBeUndefined();
  });

  test.each([
    ['no id', KEY.toString('base64')],
    ['an id with a dot', `k.1:${KEY.toString('base64')}`],
    ['a short key', `k1:${randomBytes(16).toString('base64')}`],
    ['a key that is not base64', 'k1:not base64 at all!'],
    ['a repeated id', `k1:${KEY.toString('base64')},k1:${randomBytes(32).toString('base64')}`],
  ])('when DATA_ENCRYPTION_KEYS has %s, then start-up stops naming it without echoing a key', (_what, value) => {
    const problems = problemsOf({ DATA_ENCRYPTION_KEYS: value });
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((p) => p.startsWith('DATA_ENCRYPTION_KEYS: '))).toBe(true);
    expect(problems.join('\n')).not.toContain(KEY.toString('base64'));
  });

  test('when only one bootstrap admin variable is set, then the missing one is named', () => {
    expect(problemsOf({ BOOTSTRAP_ADMIN_EMAIL: 'root@broker.test' })).toEqual([
      expect.stringMatching(/^BOOTSTRAP_ADMIN_PASSWORD: /),
    ]);
  });

  test('when several values are wrong, then every one is reported at once', () => {
    const problems = problemsOf({ PORT: 'x', ROLE: 'y' });
    expect(problems).toHaveLength(2);
  });
});

describe('listening, metrics and the boot deadline', () => {
  test('when nothing is set, then the API and a worker listen on every address, the worker on 9100, and /metrics is open', () => {
    const config = loadConfig({});
    expect({ host: config.host, worker: config.workerHttpPort, token: config.metricsToken, boot: config.bootTimeoutMs }).toEqual({
      host: '0.0.0.0',
      worker: 9100,
      token: undefined,
      boot: 30000,
    });
  });

  test('when HOST, WORKER_HTTP_PORT, METRICS_TOKEN and BOOT_TIMEOUT_MS are given, then they are taken', () => {
    const token = 'scrape-' + 'k'.repeat(20);
    const config = loadConfig({ HOST: '::1', WORKER_HTTP_PORT: '0', METRICS_TOKEN: token, BOOT_TIMEOUT_MS: '500' });
    expect([config.host, config.workerHttpPort, config.metricsToken, config.bootTimeoutMs]).toEqual(['::1', 0, token, 500]);
    expect(loadConfig({ HOST: 'api.internal' }).host).toBe('api.internal');
  });

  test('when in production without METRICS_TOKEN, then /metrics is closed to everyone unless METRICS_PUBLIC=true', () => {
    const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(40), DATA_ENCRYPTION_KEYS: KEYS };
    const closed = loadConfig(production);
    expect(closed.metricsPublic).toBe(false);
    expect(metricsAllowed(undefined, closed.metricsToken, closed.metricsPublic)).toBe(false);
    expect(metricsAllowed('Bearer anything-at-all-1234', closed.metricsToken, closed.metricsPublic)).toBe(false);
    const opened = loadConfig({ ...production, METRICS_PUBLIC: 'true' });
    expect(metricsAllowed(undefined, opened.metricsToken, opened.metricsPublic)).toBe(true);
    const token = 'scrape-' + 'k'.repeat(20);
    const guarded = loadConfig({ ...production, METRICS_TOKEN: token });
    expect(metricsAllowed(`Bearer ${token}`, guarded.metricsToken, guarded.metricsPublic)).toBe(true);
    expect(metricsAllowed(undefined, guarded.metricsToken, guarded.metricsPublic)).toBe(false);
    // Outside production an unset token leaves it open, as before; METRICS_PUBLIC=false closes it.
    const dev = loadConfig({});
    expect(metricsAllowed(undefined, dev.metricsToken, dev.metricsPublic)).toBe(true);
    expect(loadConfig({ METRICS_PUBLIC: 'false' }).metricsPublic).toBe(false);
    expect(problemsOf({ METRICS_PUBLIC: 'maybe' })).toEqual([expect.stringMatching(/^METRICS_PUBLIC: /)]);
  });

  test('when they are wrong, then each is named, and the token is never echoed', () => {
    const problems = problemsOf({
      HOST: 'not a host',
      WORKER_HTTP_PORT: '70000',
      METRICS_TOKEN: 'short token',
      BOOT_TIMEOUT_MS: '-1',
    });
    expect(problems.map((p) => p.split(':')[0])).toEqual(['HOST', 'WORKER_HTTP_PORT', 'METRICS_TOKEN', 'BOOT_TIMEOUT_MS']);
    expect(problems.join('\n')).not.toContain('short token');
  });
});

describe('retention', () => {
  test('when the retention variables are unset, then the outbox and inbox keep a week, webhook deliveries and mail 30 days', () => {
    expect(loadConfig({}).retention).toEqual({
      outboxHours: 720,
      inboxHours: 168,
      webhookDeliveryHours: 720,
      mailHours: 720,
      reportDays: 7,
    });
  });

  test('when the outbox would be kept less than the 24-hour stream resume window, then start-up is refused naming it', () => {
    expect(problemsOf({ OUTBOX_RETENTION_HOURS: '23' })).toEqual([
      expect.stringMatching(/^OUTBOX_RETENTION_HOURS: must be at least 24, .*Last-Event-ID/),
    ]);
    expect(loadConfig({ OUTBOX_RETENTION_HOURS: '24' }).retention.outboxHours).toBe(24);
  });

  test('when a retention age is not a whole number of hours from 1, then start-up is refused naming the variable', () => {
    expect(
      problemsOf({ INBOX_RETENTION_HOURS: '0', MAIL_RETENTION_HOURS: '1.5', WEBHOOK_DELIVERY_RETENTION_HOURS: '-1' }),
    ).toEqual([
      expect.stringMatching(/^INBOX_RETENTION_HOURS: must be at least 1/),
      expect.stringMatching(/^WEBHOOK_DELIVERY_RETENTION_HOURS: must be a whole number/),
      expect.stringMatching(/^MAIL_RETENTION_HOURS: must be a whole number/),
    ]);
  });
});

describe('the configuration table of docs/operations.md', () => {
  test('when the table and the config schema are compared, then each lists exactly the variables of the other', () => {
    const page = readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8');
    const section = page.slice(page.indexOf('## Configuration'), page.indexOf('\n## ', page.indexOf('## Configuration') + 1));
    const documented = new Set<string>();
    for (const line of section.split('\n').filter((l) => l.startsWith('| `'))) {
      const firstCell = line.split('|')[1]!;
      for (const match of firstCell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) documented.add(match[1]!);
    }
    expect([...documented].sort()).toEqual([...CONFIG_VARIABLES].sort());
    // The per-queue concurrency variables are one row, named by their pattern.
    expect(section).toContain('`WORKER_CONCURRENCY_<QUEUE>`');
  });
});

describe('worker pools', () => {
  test('when WORKER_QUEUES and per-queue concurrency are set, then the process serves those queues at those concurrencies', () => {
    const config = loadConfig({
      WORKER_QUEUES: 'mail, bulk-close',
      WORKER_CONCURRENCY: '3',
      WORKER_CONCURRENCY_BULK_CLOSE: '16',
    });
    expect(config.workerQueues).toEqual([
      { queue: 'mail', concurrency: 3 },
      { queue: 'bulk-close', concurrency: 16 },
    ]);
    expect(loadConfig({}).workerQueues.map((q) => q.queue)).toEqual([...ALL_QUEUES]);
  });

  test('when a queue name is unknown, in WORKER_QUEUES or a concurrency variable, then start-up stops naming it', () => {
    expect(problemsOf({ WORKER_QUEUES: 'mail,webhookz' })).toEqual([
      expect.stringMatching(/^WORKER_QUEUES: unknown queue "webhookz"/),
    ]);
    expect(problemsOf({ WORKER_CONCURRENCY_MAILS: '4' })).toEqual([expect.stringMatching(/^WORKER_CONCURRENCY_MAILS: no queue/)]);
    expect(problemsOf({ WORKER_CONCURRENCY_MAIL: 'lots' })).toEqual([expect.stringMatching(/^WORKER_CONCURRENCY_MAIL: must be/)]);
    expect(problemsOf({ WORKER_QUEUES: ' , ' })).toEqual([expect.stringMatching(/^WORKER_QUEUES: names no queue/)]);
  });
});
