import { type Ref } from '@mikro-orm/core';
import { Entity, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';
import { Integration } from './integration.entity';

export const INBOUND_OUTCOMES = ['processed', 'duplicate', 'rejected', 'failed'] as const;
export type InboundOutcome = (typeof INBOUND_OUTCOMES)[number];

/**
 * One call an integration made to us, whatever came of it. `dedupeKey` (external id and
 * status) is set on the one call that took effect, and is unique per integration: a second
 * call with the same key finds it taken and is recorded as a `duplicate`. A `failed` call holds
 * no key, so the provider's retry, or a reprocess, can still take it.
 */
@Entity({ tableName: 'integration_inbound' })
@Index({ properties: ['integration', 'createdAt'] })
@Index({
  name: 'integration_inbound_dedupe',
  expression: `create unique index "integration_inbound_dedupe" on "integration_inbound" ("integration_id", "dedupe_key") where "dedupe_key" is not null`,
})
export class InboundCall extends BaseEntity<'sourceIp' | 'externalId' | 'dedupeKey' | 'error' | 'body'> {
  @ManyToOne({ entity: () => Integration, ref: true, deleteRule: 'cascade' })
  integration!: Ref<Integration>;

  @Property({ type: 'string', length: 64, nullable: true })
  sourceIp?: string | null = null;

  @Property({ type: 'boolean' })
  signatureValid!: boolean;

  @Property({ type: 'string', length: 128, nullable: true })
  externalId?: string | null = null;

  @Property({ type: 'string', length: 200, nullable: true })
  dedupeKey?: string | null = null;

  @Property({ type: 'string', length: 16 })
  outcome!: InboundOutcome;

  @Property({ type: 'string', length: 500, nullable: true })
  error?: string | null = null;

  /** The body as received (kept 30 days by the retention job). */
  @Property({ type: 'text', nullable: true })
  body?: string | null = null;
}
