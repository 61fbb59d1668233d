import { z } from 'zod';
import { AuditSchema, auditView } from '../../domain/audit/audit';
import {
  loadBrokerSettings,
  MaintenanceSettingsSchema,
  RegistrationSettingsSchema,
  SettingsSchema,
  settingsView,
  updateBrokerSettings,
} from '../../domain/identity/broker-settings';
import { PERMISSIONS, PermissionSchema } from '../../domain/identity/permissions';
import { createRole, createStaffUser, RoleSchema, roleView, StaffUserSchema, staffUserView } from '../../domain/identity/staff';
import { AuditEntry } from '../../entities/audit-entry.entity';
import { Role } from '../../entities/role.entity';
import { StaffUser } from '../../entities/staff-user.entity';
import { errors, fieldError } from '../../platform/errors';
import { deleteRole, updateRole, updateStaffUser } from '../../domain/identity/staff-admin';
import { asStaff } from '../http/access';
import { findPage } from '../../db/find-page';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { isoInstant } from '../http/timestamps';
import { RolloverTime, TripleSwapDay } from '../../domain/eod/rollover';
import { syncRolloverSchedule } from '../../domain/eod/eod-runs';

const RoleName = z.string().trim().min(1).max(64);
const RolePermissions = z.array(PermissionSchema).max(PERMISSIONS.length * 2);
const RoleId = z.object({ role_id: z.uuid() });
const UserId = z.object({ user_id: z.uuid() });

export const adminRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/admin/roles',
    operationId: 'createRole',
    summary: 'Create a role (a named set of permissions)',
    tags: ['staff administration'],
    access: { kind: 'staff', permission: 'manage_users' },
    body: z.object({ name: RoleName, permissions: RolePermissions }),
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
    query: z.object(pageQuery()),
    responses: { 200: { description: 'A page of roles by name', schema: pageSchema(RoleSchema) } },
    handler: async ({ query, em }) =>
      json(200, await findPage(em, Role, {}, query, { orderBy: { name: 'asc', id: 'asc' } }, roleView)),
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/roles/{role_id}',
    operationId: 'getRole',
    summary: 'One role',
    tags: ['staff administration'],
    access: { kind: 'staff', permission: 'manage_users' },
    params: RoleId,
    responses: { 200: { description: 'The role', schema: RoleSchema } },
    handler: async ({ params, em }) => {
      const role = await em.findOne(Role, params.role_id);
      if (!role) throw errors.notFound('Role');
      return json(200, roleView(role));
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/api/admin/roles/{role_id}',
    operationId: 'updateRole',
    summary: "Rename a role or change its permissions, for its holders' very next request",
    description:
      "Only the fields sent change. You must hold every permission the role holds, and every permission you add (403 naming what you lack). The built-in admin role cannot change (409 ROLE_BUILT_IN); no change may leave no active user with manage_users (409 LAST_USER_MANAGER). Holders' live sessions and API tokens carry the new permissions from their next request.",
    tags: ['staff administration'],
    access: { kind: 'staff', permission: 'manage_users' },
    params: RoleId,
    body: z.object({ name: RoleName.optional(), permissions: RolePermissions.optional() }),
    responses: {
      200: { description: 'The role after the change', schema: RoleSchema },
      409: { description: 'NAME_TAKEN, ROLE_BUILT_IN or LAST_USER_MANAGER' },
    },
    handler: async ({ params, body, em, services, caller }) =>
      json(200, roleView(await updateRole(em, services.identity, asStaff(caller), params.role_id, body))),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/admin/roles/{role_id}',
    operationId: 'deleteRole',
    summary: 'Delete a role nobody holds',
    description: 'You must hold every permission the role holds (403 naming what you lack).',
    tags: ['staff administration'],
    access: { kind: 'staff', permission: 'manage_users' },
    params: RoleId,
    responses: { 204: { description: 'Deleted' }, 409: { description: 'ROLE_IN_USE or ROLE_BUILT_IN' } },
    handler: async ({ params, em, caller }) => {
      await deleteRole(em, asStaff(caller), params.role_id);
      return { status: 204 };
    },
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
    path: '/api/admin/users/{user_id}',
    operationId: 'getStaffUser',
    summary: 'One staff user',
    tags: ['staff administration'],
    access: { kind: 'staff', permission: 'manage_users' },
    params: UserId,
    responses: { 200: { description: 'The staff user', schema: StaffUserSchema } },
    handler: async ({ params, em }) => {
      const user = await em.findOne(StaffUser, params.user_id, { populate: ['roles'] });
      if (!user) throw errors.notFound('Staff user');
      return json(200, staffUserView(user));
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/api/admin/users/{user_id}',
    operationId: 'updateStaffUser',
    summary: "Change a staff user's name, roles or active state, from its very next request",
    description:
      'Only the fields sent change. You must hold every permission the user holds, whatever you change (403): nobody acts on a more powerful colleague. Roles you add must hold only permissions you hold, and only an admin assigns or removes the admin role (403). Deactivating revokes every session and API token of the user at once. No change may leave no active user with manage_users (409 LAST_USER_MANAGER).',
    tags: ['staff administration'],
    access: { kind: 'staff', permission: 'manage_users' },
    params: UserId,
    body: z.object({
      full_name: z.string().trim().min(1).max(200).optional(),
      role_ids: z.array(z.uuid()).max(50).optional(),
      is_active: z.boolean().optional(),
    }),
    responses: {
      200: { description: 'The staff user after the change', schema: StaffUserSchema },
      409: { description: 'LAST_USER_MANAGER' },
    },
    handler: async ({ params, body, em, services, caller }) =>
      json(200, staffUserView(await updateStaffUser(em, services.identity, asStaff(caller), params.user_id, body))),
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
    description:
      'A new access_token_ttl_seconds applies to tokens issued from then on (the next login or refresh); a new broker_name ' +
      'to reports built from then on. ' +
      '`rollover_time` (HH:MM UTC, default 21:00) is when the end of day runs; a change reschedules it at once. ' +
      '`triple_swap_day` (monday to friday, default wednesday) is the weekday whose rollover books three nights of swap. ' +
      '`registration` (the fields sent change): `blocked_countries` and `allowed_countries` refuse sign-ups and leads ' +
      'from other countries (403 COUNTRY_NOT_ALLOWED), never existing customers; the answer then carries ' +
      '`affected_customers`, the customers already in the blocked countries. `max_per_ip_per_hour` (default 5) limits ' +
      'sign-up attempts per address. `maintenance` `{enabled, message, until}`: while enabled, customer requests other ' +
      'than reading their own data, logging in and streams answer 503 MAINTENANCE with Retry-After (until `until`, ' +
      'else 300 s); staff are unaffected. `dormant_after_days` (default 90): the end of day makes an active customer ' +
      'dormant after that long without a closed trade. `support_first_response_minutes` (default 240). Every change ' +
      'is audited with before and after and emits `settings.updated`.',
    tags: ['broker settings'],
    access: { kind: 'staff', permission: 'manage_settings' },
    body: z.object({
      access_token_ttl_seconds: z.int().min(60).max(86_400).optional(),
      broker_name: z.string().trim().min(1).max(200).optional(),
      rollover_time: RolloverTime.optional(),
      triple_swap_day: TripleSwapDay.optional(),
      registration: RegistrationSettingsSchema.partial().optional(),
      maintenance: MaintenanceSettingsSchema.partial().optional(),
      dormant_after_days: z.int().min(1).max(3650).optional(),
      support_first_response_minutes: z.int().min(1).max(100_000).optional(),
    }),
    responses: { 200: { description: 'Settings after the change', schema: SettingsSchema } },
    handler: async ({ body, em, services, caller }) => {
      const after = await updateBrokerSettings(em, services.identity.defaultAccessTokenTtl, asStaff(caller), body);
      if (body.rollover_time !== undefined)
        // The setting is stored; should Redis not answer now, every worker re-schedules from it when it starts.
        await syncRolloverSchedule(em, services.jobs).catch((err: unknown) =>
          services.logger.warn({ err: (err as Error).message }, 'could not reschedule the rollover'),
        );
      return json(200, after);
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
      since: isoInstant().optional().describe('Inclusive lower bound of created_at'),
      until: isoInstant().optional().describe('Exclusive upper bound of created_at'),
      ...pageQuery(),
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
