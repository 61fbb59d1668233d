import type { MikroORM } from '@mikro-orm/postgresql';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import type { Identity } from '../domain/identity/identity';
import type { QuoteStore } from '../domain/prices/quote-store';
import type { JobProducer } from '../jobs/job-producer';
import type { QueueEventsHub } from '../jobs/queue-events-hub';
import type { MailTransport } from '../mail/mail-transport';
import type { Metrics } from './metrics';

/**
 * The long-lived parts both tiers share, built once per process by the runtime.
 * `orm.em` is never used directly: every request and job works in its own fork.
 */
export interface AppServices {
  config: Config;
  logger: Logger;
  orm: MikroORM;
  /** Producer-side Redis: offline queue off, so it fails fast. */
  redis: Redis;
  jobs: JobProducer;
  queueEvents: QueueEventsHub;
  metrics: Metrics;
  mail: MailTransport;
  identity: Identity;
  /** Latest bid/ask per symbol, written by the simulator, read by the order engine. */
  quotes: QuoteStore;
}
