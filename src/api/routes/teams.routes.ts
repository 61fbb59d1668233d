import { refreshTeamScopes } from '../../domain/identity/staff-admin';
import { z } from 'zod';
import {
  createTeam,
  deleteTeam,
  removeTeamMember,
  setTeamMember,
  TeamName,
  TeamSchema,
  teamViewOf,
  teamViews,
  updateTeam,
} from '../../domain/teams/teams';
import { AssignmentSchema, assignCustomer, bulkAssign, MAX_BULK_ASSIGN } from '../../domain/teams/assignment';
import { Team } from '../../entities/team.entity';
import { TEAM_ROLES } from '../../entities/team-member.entity';
import { fieldError } from '../../platform/errors';
import { asStaff } from '../http/access';
import { findPage } from '../../db/find-page';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';

const TeamId = z.object({ team_id: z.uuid() });
const MemberParams = z.object({ team_id: z.uuid(), user_id: z.uuid() });
const AssignBody = {
  account_manager_id: z.uuid().nullable().optional().describe('An active staff user; null clears the manager'),
  team_id: z.uuid().nullable().optional().describe('A team; null clears the team'),
};

export const teamRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/admin/teams',
    operationId: 'createTeam',
    summary: 'Create a team',
    description:
      'Teams nest through `parent_team_id`: the lead of a team sees the customers of every team below it. Names are unique ignoring case (409 TEAM_NAME_TAKEN). Audited.',
    tags: ['teams'],
    access: { kind: 'staff', permission: 'manage_users' },
    body: z.object({ name: TeamName, parent_team_id: z.uuid().nullable().optional() }),
    responses: { 201: { description: 'Created', schema: TeamSchema }, 409: { description: 'TEAM_NAME_TAKEN' } },
    handler: async ({ body, em, caller }) => json(201, await createTeam(em, asStaff(caller), body)),
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/teams',
    operationId: 'listTeams',
    summary: 'List teams with their members, by name',
    tags: ['teams'],
    access: { kind: 'staff', permission: 'manage_users' },
    query: z.object(pageQuery()),
    responses: { 200: { description: 'A page of teams', schema: pageSchema(TeamSchema) } },
    handler: async ({ query, em }) => {
      const page = await findPage(em, Team, {}, query, { orderBy: { name: 'asc', id: 'asc' } }, (t) => t);
      return json(200, { ...page, items: await teamViews(em, page.items) });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/admin/teams/{team_id}',
    operationId: 'getTeam',
    summary: 'One team with its members',
    tags: ['teams'],
    access: { kind: 'staff', permission: 'manage_users' },
    params: TeamId,
    responses: { 200: { description: 'The team', schema: TeamSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em }) => json(200, await teamViewOf(em, params.team_id)),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/admin/teams/{team_id}',
    operationId: 'updateTeam',
    summary: 'Rename a team or move it under another',
    description: 'A team cannot sit under itself or a team below it (422 at parent_team_id). Audited.',
    tags: ['teams'],
    access: { kind: 'staff', permission: 'manage_users' },
    params: TeamId,
    body: z.object({ name: TeamName.optional(), parent_team_id: z.uuid().nullable().optional() }),
    responses: {
      200: { description: 'The team after the change', schema: TeamSchema },
      404: { description: 'Not found' },
      409: { description: 'TEAM_NAME_TAKEN' },
    },
    handler: async ({ params, body, em, caller, services }) => {
      const team = await updateTeam(em, asStaff(caller), params.team_id, body);
      await refreshTeamScopes(em, services.identity);
      return json(200, team);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/admin/teams/{team_id}',
    operationId: 'deleteTeam',
    summary: 'Delete a team',
    description: 'Refused while teams sit under it (409 TEAM_HAS_CHILDREN); its customers become team-less. Audited.',
    tags: ['teams'],
    access: { kind: 'staff', permission: 'manage_users' },
    params: TeamId,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'Not found' }, 409: { description: 'TEAM_HAS_CHILDREN' } },
    handler: async ({ params, em, caller, services }) => {
      await deleteTeam(em, asStaff(caller), params.team_id);
      await refreshTeamScopes(em, services.identity);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'put',
    path: '/api/admin/teams/{team_id}/members/{user_id}',
    operationId: 'setTeamMember',
    summary: 'Add a staff user to a team, or change its role there',
    description:
      "`member` or `lead`; a lead with `data_scope` `team` also sees the customers of the teams below. Takes effect on the user's next request. Audited.",
    tags: ['teams'],
    access: { kind: 'staff', permission: 'manage_users' },
    params: MemberParams,
    body: z.object({ role: z.enum(TEAM_ROLES) }),
    responses: {
      200: { description: 'The team after the change', schema: TeamSchema },
      404: { description: 'No such team or user' },
    },
    handler: async ({ params, body, em, caller, services }) => {
      const team = await setTeamMember(em, asStaff(caller), params.team_id, params.user_id, body.role);
      await refreshTeamScopes(em, services.identity);
      return json(200, team);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/api/admin/teams/{team_id}/members/{user_id}',
    operationId: 'removeTeamMember',
    summary: 'Remove a staff user from a team',
    tags: ['teams'],
    access: { kind: 'staff', permission: 'manage_users' },
    params: MemberParams,
    responses: { 204: { description: 'Removed' }, 404: { description: 'Not a member' } },
    handler: async ({ params, em, caller, services }) => {
      await removeTeamMember(em, asStaff(caller), params.team_id, params.user_id);
      await refreshTeamScopes(em, services.identity);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/customers/{customer_id}/assign',
    operationId: 'assignCustomer',
    summary: "Set a customer's account manager and team",
    description:
      'Only the fields sent change; null clears one. The manager must be an active staff user and the team must exist (422 at the field). ' +
      "A customer outside the caller's scope is 404. Audited (`customer.assigned`) and emits `customer.assigned`, which reaches the new manager on the back-office stream.",
    tags: ['customers'],
    access: { kind: 'staff', permission: 'assign_customers' },
    params: z.object({ customer_id: z.uuid() }),
    body: z.object(AssignBody),
    responses: { 200: { description: 'The assignment', schema: AssignmentSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, body, em, caller }) =>
      json(200, await assignCustomer(em, asStaff(caller), params.customer_id, body)),
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/customers/bulk-assign',
    operationId: 'bulkAssignCustomers',
    summary: 'Set the account manager and team of up to 1,000 customers at once',
    description:
      "All or nothing: an unknown customer, or one outside the caller's scope, is 404 and nothing changes. Each customer's change is audited and emits `customer.assigned`.",
    tags: ['customers'],
    access: { kind: 'staff', permission: 'assign_customers' },
    body: z.object({ customer_ids: z.array(z.uuid()).min(1).max(MAX_BULK_ASSIGN), ...AssignBody }),
    responses: {
      200: {
        description: 'What was assigned',
        schema: z.object({ assigned: z.int().meta({ examples: [2] }), items: z.array(AssignmentSchema) }),
      },
      404: { description: 'A customer not found' },
    },
    handler: async ({ body, em, caller }) => {
      if (body.account_manager_id === undefined && body.team_id === undefined)
        throw fieldError('body', ['account_manager_id'], 'Send account_manager_id, team_id or both');
      return json(200, await bulkAssign(em, asStaff(caller), body));
    },
  }),
];
