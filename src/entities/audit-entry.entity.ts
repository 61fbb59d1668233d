import { Entity, Enum, Index, Property } from '@mikro-orm/decorators/legacy';
import { BaseEntity } from './base.entity';

export const ACTOR_TYPES = ['user', 'api_token', 'system', 'integration'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** Who changed what, when, with the state before and after; written in the change's own transaction. */
@Entity({ tableName: 'audit_entries' })
@Index({ properties: ['createdAt'] })
@Index({ properties: ['entityType', 'entityId'] })
@Index({ properties: ['actorId', 'createdAt'] })
export class AuditEntry extends BaseEntity<'before' | 'after' | 'requestId' | 'actorId' | 'entityId'> {
  @Enum({ items: [...ACTOR_TYPES], type: 'string' })
  actorType!: ActorType;

  /** The staff user (directly, or as the issuer of the API token used), or the integration; null for the system. */
  @Property({ type: 'uuid', nullable: true })
  actorId?: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  apiTokenId?: string | null = null;

  /** `<entity>.<verb>`, e.g. `role.created`, `settings.updated`. */
  @Property({ type: 'string', length: 64 })
  action!: string;

  @Property({ type: 'string', length: 64 })
  entityType!: string;

  @Property({ type: 'string', length: 64, nullable: true })
  entityId?: string | null = null;

  @Property({ type: 'json', nullable: true })
  before?: Record<string, unknown> | null = null;

  @Property({ type: 'json', nullable: true })
  after?: Record<string, unknown> | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  requestId?: string | null = null;
}
