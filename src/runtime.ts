import type { Server } from 'node:http';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { RedisClient } from './platform/redis';
import type { Logger } from 'pino';
import { createApp } from './api/app';
import { answerClientErrors } from './api/http/client-errors';
import type { RouteSpec } from './api/http/route';
import type { Config } from './config/config';
import { ensureDatabase, openOrm, openReplicaOrm, runMigrations } from './db/database';
import { attachReadReplica, ReadReplica } from './db/read-replica';
import { JOB_DEFINITIONS } from './jobs';
import type { JobDefinition } from './jobs/job-definition';
import { JobProducer } from './jobs/job-producer';
import { ALL_QUEUES, QUEUES } from './jobs/queues';
import { QueueEventsHub } from './jobs/queue-events-hub';
import { createMailTransport } from './mail/mail-transport';
import { checkConsumers, type EventConsumer } from './domain/events/consumers';
import { installPostingHooks } from './domain/ledger/posting';
import { installFraudRecorder } from './domain/fraud/evaluate';
import { EVENT_CONSUMERS, FRAUD_CASE_ACTIONS, FRAUD_HOLD_HANDLERS, POSTING_HOOKS, REFERRAL_RESOLVER } from './policy';
import { registerCaseAction, registerHoldHandler } from './domain/fraud/cases';
import { installReferralResolver } from './domain/identity/referrals';
import { outboxLagSeconds } from './domain/events/relay';
import { runsForMetrics, syncRolloverSchedule } from './domain/eod/eod-runs';
import { createIdentity } from './domain/identity/identity';
import { EmailTemplateRenderer } from './domain/mail/renderer';
import { QuoteStore } from './domain/prices/quote-store';
import { bootstrapStaff } from './domain/identity/staff';
import { DataKeyRing } from './platform/secret-box';
import { recordUnsealFailure } from './platform/unseal-failures';
import { developmentJwtSecret, resolveDataKeys } from './domain/secrets/data-keys';
import { SECRET_PURPOSES, UNSEAL_FAILURE_LOG } from './domain/secrets/sealed-columns';
import { VerificationLevels } from './domain/compliance/verification-levels';
import { WebhookSender } from './domain/webhooks/sender';
import { createLogger } from './platform/logger';
import { Metrics } from './platform/metrics';
import { closeRedis, createRedis, redisReady } from './platform/redis';
import type { AppServices } from './app-services';
import { PROCESSORS } from './workers';
import { StreamHub } from './api/streams/stream-hub';
import type { Processor } from './workers/processor';
import { startWorkers, type WorkerHost } from './workers/worker-host';
import { startWorkerHttp } from './workers/worker-http';
import { startOutboxWake, type OutboxWake } from './workers/outbox-wake';
import { OutboxRelayJob } from './jobs/outbox-relay.job';
import { waitForDependencies } from './wait-for-dependencies';

/**
 * The composition root: the only module that knows both tiers. ROLE picks which run here.
 */
export interface Runtime {
  services: AppServices;
  server?: Server;
  /** The port actually bound (PORT=0 picks a free one). */
  port?: number;
  workers?: WorkerHost;
  /** ROLE=worker: the port its /health and /metrics listener bound (WORKER_HTTP_PORT=0 picks a free one). */
  workerHttpPort?: number;
  /** Drains and closes everything; safe to call twice. */
  stop(): Promise<void>;
}

export interface RuntimeOptions {
  logger?: Logger;
  /** Skip database creation and migrations (tests clone an already-migrated template). */
  skipMigrations?: boolean;
  /** Replaces the processor list (registry tests). */
  processors?: Processor[];
  defaultMetrics?: boolean;
  /** Replaces the route table (error-format tests add routes of their own). */
  routes?: RouteSpec[];
  /** The served OpenAPI document, already built for the route table (a test run builds it once). */
  openApiText?: string;
  /** Event consumers beside the shipped ones (tests register theirs here). */
  consumers?: EventConsumer[];
  /** Jobs beside the shipped ones, each with its processor (a test consumer's worker). */
  extraJobs?: Array<{ definition: JobDefinition; processor: Processor }>;
}

export async function startRuntime(config: Config, options: RuntimeOptions = {}): Promise<Runtime> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const definitions = [...JOB_DEFINITIONS, ...(options.extraJobs ?? []).map((j) => j.definition)];
  const processors = [...(options.processors ?? PROCESSORS), ...(options.extraJobs ?? []).map((j) => j.processor)];
  const eventConsumers = checkConsumers([...EVENT_CONSUMERS, ...(options.consumers ?? [])], definitions);
  installPostingHooks(POSTING_HOOKS);
  for (const [action, handler] of Object.entries(FRAUD_CASE_ACTIONS))
    registerCaseAction(action as keyof typeof FRAUD_CASE_ACTIONS, handler);
  for (const [name, handler] of Object.entries(FRAUD_HOLD_HANDLERS)) registerHoldHandler(name, handler);
  installReferralResolver(REFERRAL_RESOLVER);
  if (config.webhooksAllowPrivateUrls)
    logger.warn(
      'WEBHOOKS_ALLOW_PRIVATE_URLS is on: webhooks may reach loopback and private networks over plain http (development and tests only)',
    );

  await waitForDependencies(config, logger, !options.skipMigrations);
  if (!options.skipMigrations) {
    // Migrations hold a session-level advisory lock: behind PgBouncer in transaction mode they need the direct URL.
    await ensureDatabase(config.migrationDatabaseUrl, logger);
    await runMigrations(config.migrationDatabaseUrl, logger);
  }
  const orm = await openOrm(config.databaseUrl, logger);
  installFraudRecorder(orm.em.fork() as EntityManager);
  const { keys: dataKeys, development } = await resolveDataKeys(
    { dataKeys: config.dataKeys, production: config.env === 'production' },
    orm.em.fork() as EntityManager,
  );
  if (development)
    logger.warn(
      'DATA_ENCRYPTION_KEYS is not set: secrets at rest are sealed under a development key stored in the database (never in production)',
    );
  // config.jwt.ephemeral: JWT_SECRET is unset, which configuration allows outside production only.
  const jwt = config.jwt.ephemeral
    ? { ...config.jwt, secret: await developmentJwtSecret(orm.em.fork() as EntityManager) }
    : config.jwt;
  if (config.jwt.ephemeral)
    logger.warn('JWT_SECRET is not set: tokens are signed with a development key stored in the database (never in production)');
  const generated = await bootstrapStaff(orm.em.fork() as EntityManager, config.bootstrapAdmin, {
    generateWhenMissing: config.env !== 'production',
  });
  if (generated) announceGeneratedAdmin(generated, logger);
  const redis = createRedis(config.redis, 'producer', logger);
  // Redis has just answered a probe; on a loaded machine this connection may still take a moment.
  // Should it be gone again, the API starts anyway and /ready says 503 until it answers.
  await redisReady(redis, Math.max(config.bootTimeoutMs, 3000));
  const jobs = new JobProducer(redis, config.queuePrefix);
  const metrics = new Metrics({ defaultMetrics: options.defaultMetrics ?? true });
  metrics.watchQueues(ALL_QUEUES, jobs, redis, config.queuePrefix);
  metrics.watchUnsealFailures(redis, config.queuePrefix);
  // Values of earlier releases were sealed under JWT_SECRET: readable while it is set, until re-sealed.
  const keyRing = new DataKeyRing(dataKeys, config.jwt.ephemeral ? undefined : config.jwt.secret, (failure) => {
    logger.error(
      { purpose: failure.purpose, subject: failure.subject, reason: failure.reason, key_id: failure.keyId, err: failure.message },
      UNSEAL_FAILURE_LOG,
    );
    recordUnsealFailure(redis, config.queuePrefix, failure.purpose, failure.reason);
  });
  metrics.watchOutbox(() => outboxLagSeconds(orm.em.fork() as EntityManager));
  const replica = config.replica ? await startReadReplica(config.replica, orm, logger, metrics) : undefined;
  const quotes = new QuoteStore(redis, config.queuePrefix);
  const authRedis = createRedis(config.redis, 'auth', logger);
  await redisReady(authRedis, Math.max(config.bootTimeoutMs, 3000));
  const identity = createIdentity(
    { jwt, keyPrefix: config.queuePrefix, accessTokenTtlSeconds: config.accessTokenTtlSeconds },
    authRedis,
    keyRing.box(SECRET_PURPOSES.totp),
  );
  metrics.watchRunProgress(
    'eod_run_accounts',
    'Accounts of the end-of-day runs in flight and of the latest finished one, by state',
    () => runsForMetrics(orm.em.fork() as EntityManager),
  );
  const services: AppServices = {
    config,
    logger,
    orm,
    replica,
    redis,
    authRedis,
    jobs,
    queueEvents: new QueueEventsHub(redis, config.queuePrefix),
    metrics,
    mail: createMailTransport(config.smtpUrl, logger),
    mailSecrets: keyRing.box(SECRET_PURPOSES.mail),
    mailRenderer: new EmailTemplateRenderer(),
    identity,
    quotes,
    eventConsumers,
    webhookSecrets: keyRing.box(SECRET_PURPOSES.webhook),
    documentSecrets: keyRing.box(SECRET_PURPOSES.document),
    integrationSecrets: keyRing.box(SECRET_PURPOSES.integration),
    verificationLevels: new VerificationLevels(),
    webhookSender: new WebhookSender({ timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhooksAllowPrivateUrls }),
    streams: new StreamHub({
      redis: config.redis,
      prefix: config.queuePrefix,
      logger,
      metrics,
      identity,
      commands: redis,
      orm,
      quotes,
    }),
  };

  let workerRedis: RedisClient | undefined;
  let workers: WorkerHost | undefined;
  let outboxWake: OutboxWake | undefined;
  let server: Server | undefined;
  let workerHttp: Server | undefined;
  try {
    if (config.role !== 'api') {
      workerRedis = createRedis(config.redis, 'worker', logger);
      workers = await startWorkers(services, workerRedis, definitions, processors);
      // Where the relay runs, it also runs as events commit (the schedule stays as the safety net).
      if (config.workerQueues.some((q) => q.queue === OutboxRelayJob.queue))
        outboxWake = startOutboxWake(
          config.migrationDatabaseUrl,
          async () => void (await jobs.enqueue(OutboxRelayJob, { woken: true })),
          logger,
        );
      if (config.workerQueues.some((q) => q.queue === QUEUES.eod)) {
        const pattern = await syncRolloverSchedule(orm.em.fork() as EntityManager, jobs);
        logger.info({ pattern }, 'rollover scheduled');
      }
    }
    if (config.role !== 'worker')
      server = await listen(createApp(services, options.routes, options.openApiText), config.host, config.port);
    // ROLE=all answers /health and /metrics on the API's port; a worker-only process on its own.
    if (config.role === 'worker') workerHttp = await startWorkerHttp(services, config.host, config.workerHttpPort);
  } catch (err) {
    await closeAll(logger, [
      () => outboxWake?.close(),
      () => workers?.close(),
      () => workerRedis && closeRedis(workerRedis),
      () => closeServices(services),
    ]);
    throw err;
  }
  const port = server ? (server.address() as { port: number }).port : undefined;
  if (port !== undefined) logger.info({ host: config.host, port, role: config.role }, 'api listening');
  const workerHttpPort = workerHttp ? (workerHttp.address() as { port: number }).port : undefined;
  if (workerHttpPort !== undefined) logger.info({ host: config.host, port: workerHttpPort }, 'worker http listening');

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      logger.info('shutting down: draining requests and jobs');
      // Order matters: stop taking requests, let in-flight requests and jobs finish, then close connections.
      await closeAll(
        logger,
        [
          // Open streams would hold the server's close for the whole grace period: they end first, cleanly.
          () => services.streams.close(),
          () => (server ? closeServer(server, config.shutdownGraceMs) : undefined),
          () => outboxWake?.close(),
          () => workers?.close(),
          // Health and metrics answer until the jobs in hand have finished.
          () => (workerHttp ? closeServer(workerHttp, 0) : undefined),
          () => workerRedis && closeRedis(workerRedis),
          () => closeServices(services),
        ],
        config.shutdownGraceMs + CLOSE_STEP_BOUND_MS,
      );
      logger.info('shutdown complete');
    })());

  return { services, server, port, workers, workerHttpPort, stop };
}

/** The read replica of DATABASE_REPLICA_URL, attached to the primary's ORM (readOnReplica finds it there), its metrics and its probe running. */
async function startReadReplica(
  settings: NonNullable<Config['replica']>,
  orm: MikroORM,
  logger: Logger,
  metrics: Metrics,
): Promise<ReadReplica> {
  const replica = new ReadReplica(await openReplicaOrm(settings.url, logger), orm, {
    maxLagMs: settings.maxLagMs,
    waitMs: settings.waitMs,
    logger,
    onFallback: (reason) => countFallback(reason),
  });
  const countFallback = metrics.watchReplica(() => {
    const status = replica.status();
    return { up: status.state === 'streaming' || status.state === 'lagging', lagMs: status.lag_ms };
  });
  attachReadReplica(orm, replica);
  replica.start();
  return replica;
}

function listen(app: ReturnType<typeof createApp>, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    answerClientErrors(server);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
    // Slow clients may not hold a socket open forever.
    server.headersTimeout = 15_000;
    server.requestTimeout = 60_000;
    server.keepAliveTimeout = 5_000;
  });
}

/** Stops accepting, lets in-flight requests finish, and cuts what is left after the grace period. */
function closeServer(server: Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(timer);
      resolve();
    });
    // Idle keep-alive sockets would otherwise hold close() open until they time out.
    server.closeIdleConnections();
  });
}

async function closeServices(services: AppServices): Promise<void> {
  await closeAll(services.logger, [
    () => services.streams.close(),
    () => services.queueEvents.close(),
    () => services.jobs.close(),
    () => closeRedis(services.redis),
    () => closeRedis(services.authRedis),
    () => services.mail.close(),
    () => services.webhookSender.close(),
    () => services.replica?.close(),
    () => services.orm.close(true),
  ]);
}

/**
 * Runs every step even when one fails, so a broken Redis does not leave Postgres open; and
 * gives up waiting on a step after `boundMs`, with a warning, so one that never settles (a
 * client waiting on a connection the database cut) does not hold the process open forever.
 * Jobs a worker still held are then taken again by another (delivery is at least once).
 */
async function closeAll(logger: Logger, steps: Array<() => unknown>, boundMs = CLOSE_STEP_BOUND_MS): Promise<void> {
  for (const [i, step] of steps.entries()) {
    let timer: NodeJS.Timeout | undefined;
    const outrun = new Promise<'outrun'>((resolve) => {
      timer = setTimeout(() => resolve('outrun'), boundMs);
      timer.unref();
    });
    try {
      const settled = await Promise.race([Promise.resolve().then(step), outrun]);
      if (settled === 'outrun')
        logger.warn({ step: i, bound_ms: boundMs }, 'a shutdown step did not finish in time; going on without it');
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'error while closing');
    } finally {
      clearTimeout(timer);
    }
  }
}

/** How long shutdown waits on one step beyond the requests' grace period. */
const CLOSE_STEP_BOUND_MS = 30_000;

/**
 * A first run without BOOTSTRAP_ADMIN_*: the generated admin's password is shown once, on
 * the terminal (stderr), never in the structured log.
 */
function announceGeneratedAdmin(admin: { email: string; password: string }, logger: Logger): void {
  logger.warn({ email: admin.email }, 'no staff user existed: created an admin with a generated password (shown once on stderr)');
  process.stderr.write(
    [
      '',
      'No staff user existed, so one admin was created. Its password is shown this once:',
      `  email:    ${admin.email}`,
      `  password: ${admin.password}`,
      'Log in at POST /api/admin/users/login (or try it on /docs). Set BOOTSTRAP_ADMIN_EMAIL and',
      'BOOTSTRAP_ADMIN_PASSWORD to choose the first admin yourself.',
      '',
    ].join('\n') + '\n',
  );
}
