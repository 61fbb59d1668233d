import { Entity, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

export const INTEGRATION_KINDS = ['psp', 'kyc', 'crm', 'marketing'] as const;
export type IntegrationKind = (typeof INTEGRATION_KINDS)[number];

/**
 * An outside system the broker connects: a payment provider (kind `psp`), a KYC or CRM
 * service. A payment provider is this one record, seen through two views (the providers'
 * and the registry's). `config` is what the adapter reads and the API shows; `secrets` are
 * sealed together as one JSON object (AES-256-GCM under DATA_ENCRYPTION_KEYS, as webhook
 * secrets are) and never answered. A rotation keeps the replaced set valid for 24 hours,
 * so callbacks signed with the old one still verify while the provider switches.
 */
@Entity({ tableName: 'integrations' })
@Index({ properties: ['kind', 'createdAt'] })
export class Integration extends BaseEntity<
  'enabled' | 'previousSecretSealed' | 'previousSecretExpiresAt' | 'lastInboundAt' | 'lastError'
> {
  @Property({ type: 'string', length: 16 })
  kind!: IntegrationKind;

  @Property({ type: 'string', length: 32 })
  adapter!: string;

  @Property({ type: 'string', length: 100 })
  name!: string;

  @Property({ type: 'boolean' })
  enabled: boolean = true;

  @Property({ type: 'json' })
  config!: Record<string, unknown>;

  /** The secrets object, sealed. */
  @Property({ type: 'text', lazy: true })
  secretSealed!: string;

  /** The secrets a rotation replaced, sealed: still accepted until previousSecretExpiresAt. */
  @Property({ type: 'text', lazy: true, nullable: true })
  previousSecretSealed?: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  previousSecretExpiresAt?: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz', nullable: true })
  lastInboundAt?: Date | null = null;

  @Property({ type: 'string', length: 500, nullable: true })
  lastError?: string | null = null;
}
