import type { MikroORM } from '@mikro-orm/postgresql';
import type { RedisClient } from './platform/redis';
import type { Logger } from 'pino';
import type { Config } from './config/config';
import type { EventConsumer } from './domain/events/consumers';
import type { Identity } from './domain/identity/identity';
import type { MailRenderer } from './domain/mail/renderer';
import type { QuoteStore } from './domain/prices/quote-store';
import type { JobProducer } from './jobs/job-producer';
import type { QueueEventsHub } from './jobs/queue-events-hub';
import type { MailTransport } from './mail/mail-transport';
import type { SecretBox } from './platform/secret-box';
import type { WebhookSender } from './domain/webhooks/sender';
import type { Metrics } from './platform/metrics';
import type { VerificationLevels } from './domain/compliance/verification-levels';
import type { StreamHub } from './api/streams/stream-hub';
import type { ReadReplica } from './db/read-replica';

/**
 * The long-lived parts both tiers share, built once per process by the composition root
 * (runtime.ts) and handed to route handlers and job processors. Domain code never takes the
 * whole bag: it is given the narrow parts it needs (the quote store, an enqueue function).
 * `orm.em` is never used directly: every request and job works in its own fork.
 */
export interface AppServices {
  config: Config;
  logger: Logger;
  orm: MikroORM;
  /** The read replica heavy reads go to (DATABASE_REPLICA_URL); undefined: everything reads the primary. */
  replica: ReadReplica | undefined;
  /** Producer-side Redis: offline queue off, so it fails fast. */
  redis: RedisClient;
  /** The auth caches' and throttles' connection (auto-pipelined; see createRedis). */
  authRedis: RedisClient;
  jobs: JobProducer;
  queueEvents: QueueEventsHub;
  metrics: Metrics;
  mail: MailTransport;
  /** Seals a mail's secret template values at rest (queueMail) and opens them to send. */
  mailSecrets: SecretBox;
  mailRenderer: MailRenderer;
  identity: Identity;
  /** Latest bid/ask per symbol, written by the simulator, read by the order engine. */
  quotes: QuoteStore;
  /** Who the outbox relay hands domain events to (checked at start-up). */
  eventConsumers: readonly EventConsumer[];
  /** Seals webhook signing secrets at rest; the workers open them to sign. */
  webhookSecrets: SecretBox;
  /** Seals customers' documents at rest; staff downloads open them. */
  documentSecrets: SecretBox;
  /** Seals the secrets of integrations (payment providers' callback secrets, ...). */
  integrationSecrets: SecretBox;
  /** What each verification level may do, cached in the process (see VerificationLevels). */
  verificationLevels: VerificationLevels;
  /** The HTTP client of webhook deliveries (one keep-alive pool per process). */
  webhookSender: WebhookSender;
  /** The event streams this process serves (API tier; subscribes to the live feed with the first stream). */
  streams: StreamHub;
}
