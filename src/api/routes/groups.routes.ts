import { z } from 'zod';
import { countAccountsInGroup } from '../../domain/accounts/account-usage';
import { cloneGroup, createGroup, deleteGroup, findGroup, updateGroup } from '../../domain/groups/groups';
import { GroupCreateSchema, GroupPatchSchema, GroupSchema, groupView } from '../../domain/groups/group-terms';
import {
  deleteGroupInstrument,
  GroupInstrumentSchema,
  listGroupInstruments,
  putGroupInstrument,
} from '../../domain/instruments/instruments';
import { Group } from '../../entities/group.entity';
import { asStaff } from '../http/access';
import { findPage } from '../../db/find-page';
import { pageQuery, pageSchema } from '../http/paging';
import { queryBool } from '../http/query';
import { withPlaces } from '../../platform/decimal-places';
import { COMMISSION_VALUE_MAX, SPREAD_POINTS_MAX } from '../../platform/bounds';
import { defineRoute, json, type RouteSpec } from '../http/route';

const GroupId = z.object({ group_id: z.uuid() });
const GroupSymbol = z.object({ group_id: z.uuid(), symbol: z.string().min(1).max(32) });

export const groupRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/groups',
    operationId: 'createGroup',
    summary: 'Create a trading group',
    description: 'Omitted fields take the defaults of the Group table. Names are unique ignoring case (409 NAME_TAKEN).',
    tags: ['groups'],
    access: { kind: 'staff', permission: 'manage_groups' },
    body: GroupCreateSchema,
    responses: { 201: { description: 'Created', schema: GroupSchema }, 409: { description: 'NAME_TAKEN' } },
    handler: async ({ body, em, caller }) => json(201, groupView(await createGroup(em, asStaff(caller), body))),
  }),
  defineRoute({
    method: 'get',
    path: '/groups',
    operationId: 'listGroups',
    summary: 'List trading groups, oldest first',
    tags: ['groups'],
    access: { kind: 'staff', permission: 'view_groups' },
    query: z.object({ is_active: queryBool().optional(), ...pageQuery() }),
    responses: { 200: { description: 'A page of groups', schema: pageSchema(GroupSchema) } },
    handler: async ({ query, em }) => {
      const where = query.is_active === undefined ? {} : { isActive: query.is_active };
      return json(200, await findPage(em, Group, where, query, { orderBy: { createdAt: 'asc', id: 'asc' } }, groupView));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/groups/{group_id}',
    operationId: 'getGroup',
    summary: 'One trading group',
    tags: ['groups'],
    access: { kind: 'staff', permission: 'view_groups' },
    params: GroupId,
    responses: { 200: { description: 'The group', schema: GroupSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em }) => json(200, groupView(await findGroup(em, params.group_id))),
  }),
  defineRoute({
    method: 'patch',
    path: '/groups/{group_id}',
    operationId: 'updateGroup',
    summary: 'Change a trading group',
    description: 'Only the fields sent change, with the same bounds as creation; null clears description and max_exposure.',
    tags: ['groups'],
    access: { kind: 'staff', permission: 'manage_groups' },
    params: GroupId,
    body: GroupPatchSchema,
    responses: { 200: { description: 'The group after the change', schema: GroupSchema }, 409: { description: 'NAME_TAKEN' } },
    handler: async ({ params, body, em, caller }) =>
      json(200, groupView(await updateGroup(em, asStaff(caller), params.group_id, body))),
  }),
  defineRoute({
    method: 'delete',
    path: '/groups/{group_id}',
    operationId: 'deleteGroup',
    summary: 'Delete a trading group no account uses',
    tags: ['groups'],
    access: { kind: 'staff', permission: 'manage_groups' },
    params: GroupId,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'Not found' }, 409: { description: 'GROUP_IN_USE' } },
    handler: async ({ params, em, caller }) => {
      await deleteGroup(em, asStaff(caller), params.group_id, countAccountsInGroup);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/groups/{group_id}/clone',
    operationId: 'cloneGroup',
    summary: 'Clone a trading group with its instrument rows',
    description:
      'The clone is inactive and not default, named "<name> (copy)", then "(copy 2)", "(copy 3)", ..., shortened to 64 characters.',
    tags: ['groups'],
    access: { kind: 'staff', permission: 'manage_groups' },
    params: GroupId,
    responses: { 201: { description: 'The clone', schema: GroupSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em, caller }) => json(201, groupView(await cloneGroup(em, asStaff(caller), params.group_id))),
  }),
  defineRoute({
    method: 'put',
    path: '/groups/{group_id}/instruments/{symbol}',
    operationId: 'putGroupInstrument',
    summary: 'Set how a group trades an instrument',
    tags: ['groups'],
    access: { kind: 'staff', permission: 'manage_groups' },
    params: GroupSymbol,
    body: z.object({
      enabled: z.boolean(),
      spread: withPlaces(z.number().min(0).max(SPREAD_POINTS_MAX), 2).describe('Points added to the quote spread'),
      commission_value: withPlaces(z.number().min(0).max(COMMISSION_VALUE_MAX), 4)
        .nullable()
        .optional()
        .describe("Overrides the group's commission_value"),
      swap_long: withPlaces(z.number().min(-100_000).max(100_000), 4),
      swap_short: withPlaces(z.number().min(-100_000).max(100_000), 4),
    }),
    responses: {
      200: { description: 'Replaced', schema: GroupInstrumentSchema },
      201: { description: 'Created', schema: GroupInstrumentSchema },
      404: { description: 'Unknown group or instrument' },
    },
    handler: async ({ params, body, em, caller }) => {
      const { view, created } = await putGroupInstrument(em, asStaff(caller), params.group_id, params.symbol, body);
      return json(created ? 201 : 200, view);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/groups/{group_id}/instruments',
    operationId: 'listGroupInstruments',
    summary: "A group's instrument rows",
    tags: ['groups'],
    access: { kind: 'staff', permission: 'view_groups' },
    params: GroupId,
    responses: { 200: { description: 'Rows by symbol', schema: z.object({ items: z.array(GroupInstrumentSchema) }) } },
    handler: async ({ params, em }) => json(200, { items: await listGroupInstruments(em, params.group_id) }),
  }),
  defineRoute({
    method: 'delete',
    path: '/groups/{group_id}/instruments/{symbol}',
    operationId: 'deleteGroupInstrument',
    summary: 'Stop a group trading an instrument',
    tags: ['groups'],
    access: { kind: 'staff', permission: 'manage_groups' },
    params: GroupSymbol,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'Not found' } },
    handler: async ({ params, em, caller }) => {
      await deleteGroupInstrument(em, asStaff(caller), params.group_id, params.symbol);
      return { status: 204 };
    },
  }),
];
