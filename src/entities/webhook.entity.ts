import { Check, Entity, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/**
 * An integrator's endpoint. The secret is sealed (AES-256-GCM under
 * DATA_ENCRYPTION_KEYS, platform/secret-box.ts): the workers must read it to sign, and the
 * API never answers it. `events` null means every event type, including types added later.
 * Deliveries, their messages and attempts live in tables of their own (WebhookDelivery,
 * WebhookMessage, WebhookAttempt), written with SQL by the webhook workers.
 */
@Entity({ tableName: 'webhooks' })
@Check({ name: 'webhooks_batch_size_max_check', expression: '(batch_size_max >= 1) AND (batch_size_max <= 1000)' })
export class Webhook extends BaseEntity<
  | 'isActive'
  | 'batchSizeMax'
  | 'affiliateId'
  | 'events'
  | 'disabledReason'
  | 'failingSince'
  | 'previousSecretSealed'
  | 'previousSecretExpiresAt'
> {
  @Property({ type: 'string', length: 2048 })
  endpointUrl!: string;

  @Property({ type: 'text', lazy: true })
  secretSealed!: string;

  /** The secret a rotation replaced, sealed like the current one: it signs too until previousSecretExpiresAt. */
  @Property({ type: 'text', lazy: true, nullable: true })
  previousSecretSealed?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  previousSecretExpiresAt?: Date | null = null;

  @Property({ type: 'boolean' })
  isActive = true;

  @Property({ type: 'integer' })
  batchSizeMax = 100;

  @Property({ type: 'string', length: 255, nullable: true })
  affiliateId?: string | null = null;

  @Property({ type: 'json', nullable: true })
  events?: string[] | null = null;

  /** Why the service turned it off (410 Gone, failing for 5 days); null when active or turned off by staff. */
  @Property({ type: 'string', length: 255, nullable: true })
  disabledReason?: string | null = null;

  /** Since when every attempt has failed; null after a success. Five days of it disables the webhook. */
  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  failingSince?: Date | null = null;
}
