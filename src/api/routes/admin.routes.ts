import { z } from 'zod';
import { auditView } from '../../domain/audit/audit';
import { recordAudit } from '../../domain/audit/audit';
import { loadBrokerSettings, settingsView } from '../../domain/identity/broker-settings';
import { PERMISSIONS } from '../../domain/identity/permissions';
import { createRole, createStaffUser, roleView, staffUserView } from '../../domain/identity/staff';
import { AuditEntry } from '../../entities/audit-entry.entity';
import { Role } from '../../entities/role.entity';
import { StaffUser } from '../../entities/staff-user.entity';
import { fieldError } from '../../platform/errors';
import { asStaff } from '../http/access';
import { findPage, pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';

const PermissionSchema = z.enum(PERMISSIONS);
const RoleSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  permissions: z.array(PermissionSchema),
  built_in: z.boolean(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
const StaffUserSchema = z.object({
  id: z.uuid(),
  email: z.string(),
  full_name: z.string(),
  is_active: z.boolean(),
  totp_enabled: z.boolean(),
  role_ids: z.array(z.uuid()),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
const SettingsSchema = z.object({ access_token_ttl_seconds: z.int(), updated_at: z.iso.datetime() });
const AuditSchema = z.object({
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

export const adminRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/admin/roles',
    operationId: 'createRole',
    summary: 'Create a role (a named set of permissions)',
    tags: ['staff administration'],
    access: { kind: 'staff', permission: 'manage_users' },
    body: z.object({
      name: z.string().trim().min(1).max(64),
      permissions: z.array(PermissionSchema).max(PERMISSIONS.length * 2),
    }),
    responses: { 201: { description: 'Created', schema: RoleSchema }, 409: { description: 'NAME_TAKEN' } },
    handler: async ({ body, em, caller }) => json(201, roleView(await createRole(em, asStaff(caller), body))),
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/roles',
    operationId: 'listRoles',
    summary: 'List roles',
    tags: ['staff administration'],
    access: { kind: 'staff', permission: 'manage_users' },
    responses: { 200: { description: 'All roles by name', schema: z.object({ items: z.array(RoleSchema) }) } },
    handler: async ({ em }) => json(200, { items: (await em.find(Role, {}, { orderBy: { name: 'asc' } })).map(roleView) }),
  }),
  defineRoute({
    method: 'post',
    path: '/api/admin/users',
    operationId: 'createStaffUser',
    summary: 'Create a staff user',
    tags: ['staff administration'],
    access: { kind: 'staff', permission: 'manage_users' },
    body: z.object({
      email: z.email().max(320),
      password: z.string().min(12).max(256),
      full_name: z.string().trim().min(1).max(200),
      role_ids: z.array(z.uuid()).max(50).default([]),
    }),
    responses: { 201: { description: 'Created', schema: StaffUserSchema }, 409: { description: 'EMAIL_TAKEN' } },
    handler: async ({ body, em, caller }) => json(201, staffUserView(await createStaffUser(em, asStaff(caller), body))),
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/users',
    operationId: 'listStaffUsers',
    summary: 'List staff users',
    tags: ['staff administration'],
    access: { kind: 'staff', permission: 'manage_users' },
    query: z.object(pageQuery()),
    responses: { 200: { description: 'A page of staff users by email', schema: pageSchema(StaffUserSchema) } },
    handler: async ({ query, em }) => {
      return json(
        200,
        await findPage(em, StaffUser, {}, query, { orderBy: { email: 'asc' }, populate: ['roles'] }, staffUserView),
      );
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/settings',
    operationId: 'getSettings',
    summary: 'Broker settings',
    tags: ['broker settings'],
    access: { kind: 'staff', permission: 'manage_settings' },
    responses: { 200: { description: 'Settings', schema: SettingsSchema } },
    handler: async ({ em, services }) =>
      json(200, settingsView(await loadBrokerSettings(em, services.identity.defaultAccessTokenTtl))),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/admin/settings',
    operationId: 'updateSettings',
    summary: 'Change broker settings',
    description: 'A new access_token_ttl_seconds applies to tokens issued from then on (the next login or refresh).',
    tags: ['broker settings'],
    access: { kind: 'staff', permission: 'manage_settings' },
    body: z.object({ access_token_ttl_seconds: z.int().min(60).max(86_400).optional() }),
    responses: { 200: { description: 'Settings after the change', schema: SettingsSchema } },
    handler: async ({ body, em, services, caller }) => {
      const settings = await loadBrokerSettings(em, services.identity.defaultAccessTokenTtl);
      const before = settingsView(settings);
      if (body.access_token_ttl_seconds !== undefined) settings.accessTokenTtlSeconds = body.access_token_ttl_seconds;
      settings.updatedAt = new Date();
      recordAudit(em, asStaff(caller), {
        action: 'settings.updated',
        entityType: 'broker_settings',
        entityId: '1',
        before,
        after: settingsView(settings),
      });
      await em.flush();
      return json(200, settingsView(settings));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/audit',
    operationId: 'listAudit',
    summary: 'The audit trail of staff changes, newest first',
    tags: ['audit'],
    access: { kind: 'staff', permission: 'view_audit' },
    query: z.object({
      actor_id: z.uuid().optional(),
      action: z.string().max(64).optional(),
      entity_type: z.string().max(64).optional(),
      entity_id: z.string().max(64).optional(),
      since: z.iso.datetime({ offset: true }).optional().describe('Inclusive lower bound of created_at'),
      until: z.iso.datetime({ offset: true }).optional().describe('Exclusive upper bound of created_at'),
      ...pageQuery(200, 50),
    }),
    responses: { 200: { description: 'A page of audit entries', schema: pageSchema(AuditSchema) } },
    handler: async ({ query, em }) => {
      if (query.since && query.until && new Date(query.since) >= new Date(query.until)) {
        throw fieldError('query', ['until'], 'until must be later than since');
      }
      const created: Record<string, Date> = {};
      if (query.since) created.$gte = new Date(query.since);
      if (query.until) created.$lt = new Date(query.until);
      const where = {
        ...(query.actor_id ? { actorId: query.actor_id } : {}),
        ...(query.action ? { action: query.action } : {}),
        ...(query.entity_type ? { entityType: query.entity_type } : {}),
        ...(query.entity_id ? { entityId: query.entity_id } : {}),
        ...(Object.keys(created).length ? { createdAt: created } : {}),
      };
      return json(200, await findPage(em, AuditEntry, where, query, { orderBy: { createdAt: 'desc', id: 'desc' } }, auditView));
    },
  }),
];
