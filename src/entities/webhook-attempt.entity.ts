import { type Ref } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { WebhookDelivery } from './webhook-delivery.entity';

/**
 * One request of a delivery and what came of it: the status code and the start of the
 * receiver's answer, or why there was none. Written only by the stored function
 * `webhook_attempts_record` (src/db/functions), for a success, a failure, or the attempt of a
 * worker that stopped (recorded by the next claim).
 */
@Entity({ tableName: 'webhook_attempts' })
@Index({ name: 'webhook_attempts_delivery_index', properties: ['delivery', 'attempt'] })
export class WebhookAttempt {
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @ManyToOne({ entity: () => WebhookDelivery, ref: true, deleteRule: 'cascade' })
  delivery!: Ref<WebhookDelivery>;

  @Property({ type: 'integer' })
  attempt!: number;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  startedAt!: Date;

  @Property({ type: 'integer' })
  durationMs!: number;

  @Property({ type: 'integer', nullable: true })
  statusCode?: number | null = null;

  @Property({ type: 'string', length: 500, nullable: true })
  error?: string | null = null;

  @Property({ type: 'text', nullable: true })
  responseBody?: string | null = null;
}
