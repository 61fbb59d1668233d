import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { AuditEntry } from '../../entities/audit-entry.entity';
import type { StaffCaller } from '../identity/caller';
import { logContext } from '../../platform/logger';

export interface AuditChange {
  action: string;
  entityType: string;
  entityId?: string | null;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
}

/**
 * Adds an audit row to the caller's unit of work, so it commits (or not) with the change
 * it describes. `before` and `after` are the API views of the entity: never secrets.
 */
export function recordAudit(em: EntityManager, actor: StaffCaller | 'system', change: AuditChange): AuditEntry {
  return em.create(AuditEntry, auditFields(actor, change));
}

/** The audit row's values, for the few hot paths that write it with plain SQL in one statement. */
export function auditFields(actor: StaffCaller | 'system', change: AuditChange) {
  return {
    actorType: actor === 'system' ? ('system' as const) : actor.kind,
    actorId: actor === 'system' ? null : actor.userId,
    apiTokenId: actor !== 'system' && actor.kind === 'api_token' ? actor.tokenId : null,
    action: change.action,
    entityType: change.entityType,
    entityId: change.entityId ?? null,
    before: change.before ?? null,
    after: change.after ?? null,
    requestId: logContext.getStore()?.request_id ?? null,
  };
}

export const AuditSchema = z.object({
  id: z.uuid(),
  actor_type: z.enum(['user', 'api_token', 'system']),
  actor_id: z.uuid().nullable(),
  api_token_id: z.uuid().nullable(),
  action: z.string(),
  entity_type: z.string(),
  entity_id: z.string().nullable(),
  before: z.record(z.string(), z.unknown()).nullable(),
  after: z.record(z.string(), z.unknown()).nullable(),
  request_id: z.string().nullable(),
  created_at: z.iso.datetime(),
});
export type AuditView = z.output<typeof AuditSchema>;

export function auditView(a: AuditEntry): AuditView {
  return {
    id: a.id,
    actor_type: a.actorType,
    actor_id: a.actorId ?? null,
    api_token_id: a.apiTokenId ?? null,
    action: a.action,
    entity_type: a.entityType,
    entity_id: a.entityId ?? null,
    before: a.before ?? null,
    after: a.after ?? null,
    request_id: a.requestId ?? null,
    created_at: a.createdAt.toISOString(),
  };
}
