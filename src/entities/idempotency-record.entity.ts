import { Entity, Enum, Property, Unique } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

/**
 * The first answer to a money-moving request sent with an Idempotency-Key, kept 24 hours
 * so a retry with the same key and body replays it instead of moving money twice.
 */
@Entity({ tableName: 'idempotency_keys' })
@Unique({ properties: ['scope', 'key'] })
export class IdempotencyRecord extends BaseEntity<'state' | 'responseStatus' | 'responseBody'> {
  /** Whose key it is: `user:<id>`, `api_token:<id>` or `customer:<id>`; keys never collide across callers. */
  @Property({ type: 'string', length: 80 })
  scope!: string;

  @Property({ type: 'string', length: 255 })
  key!: string;

  /** SHA-256 of method, route and body: the same key with another body is refused. */
  @Property({ type: 'string', length: 64 })
  requestHash!: string;

  @Enum({ items: ['in_flight', 'completed'], type: 'string' })
  state: 'in_flight' | 'completed' = 'in_flight';

  @Property({ type: 'integer', nullable: true })
  responseStatus?: number | null = null;

  /** `json`, not `jsonb`: a replay answers the fields in the order the first answer had. */
  @Property({ type: 'json', columnType: 'json', nullable: true })
  responseBody?: unknown = null;

  @Property({ type: 'datetime', columnType: 'timestamptz' })
  expiresAt!: Date;
}
