import { Check, Entity, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { bigintText } from './column-types';

/**
 * An integrator's endpoint. The secret is sealed (AES-256-GCM under
 * DATA_ENCRYPTION_KEYS, platform/secret-box.ts): the workers must read it to sign, and the
 * API never answers it. `events` null means every event type, including types added later.
 * Deliveries and their attempts live in tables of their own (WebhookDelivery, WebhookAttempt),
 * written with SQL by the webhook workers. The events a webhook is owed are not copied
 * anywhere: its delivery claim reads them from the outbox past `cursorSeq`.
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
  | 'cursorSeq'
  | 'pausedSeq'
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

  /**
   * The outbox position (domain_events.publication_seq) its delivery claim has read up to;
   * the claim moves it (src/db/functions/webhook_delivery_steps.sql). A new webhook starts at a
   * fresh publication number, so it gets the events published after it was saved.
   */
  @Property({ type: bigintText(), columnType: 'bigint', defaultRaw: "nextval('domain_event_publication_seq')", lazy: true })
  cursorSeq!: string;

  /**
   * While turned off: the publication number drawn when it was turned off. The events between
   * the cursor and it were owed before then, and become deliveries when it is turned on again;
   * the events after it were written while it was off and are not for it.
   */
  @Property({ type: bigintText(), columnType: 'bigint', nullable: true, lazy: true })
  pausedSeq?: string | null;
}
