import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { ACTOR_TYPES, AuditEntry } from '../../entities/audit-entry.entity';
import type { StaffCaller } from '../../platform/caller';
import { logContext } from '../../platform/logger';

/**
 * An outside system acting on its own report (a KYC provider's review): audited under its
 * integration, `integration:<id>`, never as a staff user.
 */
export interface IntegrationActor {
  kind: 'integration';
  integrationId: string;
}

export type AuditActor = StaffCaller | 'system' | IntegrationActor;

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
export function recordAudit(em: EntityManager, actor: AuditActor, change: AuditChange): AuditEntry {
  return em.create(AuditEntry, auditFields(actor, change));
}

/** The audit row's values, for the few hot paths that write it with plain SQL in one statement. */
export function auditFields(actor: AuditActor, change: AuditChange) {
  return {
    actorType: actor === 'system' ? ('system' as const) : actor.kind,
    actorId: actor === 'system' ? null : actor.kind === 'integration' ? actor.integrationId : actor.userId,
    apiTokenId: actor !== 'system' && actor.kind === 'api_token' ? actor.tokenId : null,
    action: change.action,
    entityType: change.entityType,
    entityId: change.entityId ?? null,
    before: change.before ?? null,
    after: change.after ?? null,
    requestId: logContext.getStore()?.request_id ?? null,
  };
}

type AuditFields = ReturnType<typeof auditFields>;

/** An audit row's values as the named parameters of auditInsertSql. */
export interface AuditParams {
  audit_id: string;
  actor_type: AuditFields['actorType'];
  actor_id: string | null;
  api_token_id: string | null;
  action: string;
  entity_type: string;
  entity_id: string | null;
  after: string;
  request_id: string | null;
}

export function auditParams(id: string, audit: AuditFields): AuditParams {
  return {
    audit_id: id,
    actor_type: audit.actorType,
    actor_id: audit.actorId,
    api_token_id: audit.apiTokenId,
    action: audit.action,
    entity_type: audit.entityType,
    entity_id: audit.entityId,
    after: JSON.stringify(audit.after),
    request_id: audit.requestId,
  };
}

/**
 * The audit insert as the tail of a statement that writes the change it describes (named
 * parameters of AuditParams), for the few hot paths that write both in one round trip. `at` is
 * its time (an expression of that statement), `from` the CTE it is selected from. This module
 * is the only code that names the audit table's columns.
 */
export function auditInsertSql(at: string, from: string): string {
  return `insert into audit_entries (id, created_at, updated_at, actor_type, actor_id, api_token_id, action, entity_type, entity_id, after, request_id)
select :audit_id, ${at}, ${at}, :actor_type, :actor_id, :api_token_id, :action, :entity_type, :entity_id, :after::jsonb, :request_id
from ${from}`;
}

export const AuditSchema = z.object({
  id: z.uuid(),
  actor_type: z.enum(ACTOR_TYPES),
  actor_id: z.uuid().nullable().describe('The staff user (also for an API token: its issuer), or the integration'),
  actor: z
    .string()
    .describe('Who acted, as one string: `user:<id>`, `api_token:<token id>`, `integration:<id>` or `system`')
    .meta({ examples: ['integration:6e1c2b7a-3f4d-4b8e-9a51-0c2d3e4f5a6b'] }),
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

function actorText(a: AuditEntry): string {
  if (a.actorType === 'system') return 'system';
  if (a.actorType === 'api_token') return `api_token:${a.apiTokenId ?? ''}`;
  return `${a.actorType}:${a.actorId ?? ''}`;
}

export function auditView(a: AuditEntry): AuditView {
  return {
    id: a.id,
    actor_type: a.actorType,
    actor_id: a.actorId ?? null,
    actor: actorText(a),
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
