import { z } from 'zod';
import { countAccountsInGroup } from '../../domain/accounts/account-usage';
import { cloneGroup, createGroup, deleteGroup, findGroup, groupView, updateGroup } from '../../domain/groups/groups';
import { deleteGroupInstrument, listGroupInstruments, putGroupInstrument } from '../../domain/instruments/instruments';
import { COMMISSION_TYPES, Group } from '../../entities/group.entity';
import { asStaff } from '../http/access';
import { findPage, pageQuery, pageSchema } from '../http/paging';
import { queryBool } from '../http/query';
import { withPlaces } from '../http/amounts';
import { defineRoute, json, type RouteSpec } from '../http/route';

/** The bounds of the spec's Group table, shared by creation (with defaults) and PATCH (without). */
const groupFields = {
  name: z.string().min(1).max(64),
  description: z.string().max(10_000).nullable(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/)
    .describe('ISO 4217 code, three capital letters'),
  default_leverage: z.int().min(1).max(1000),
  margin_call_level: withPlaces(z.number().min(20).max(500), 4),
  stopout_level: withPlaces(z.number().min(5).max(80), 4),
  commission_type: z.enum(COMMISSION_TYPES),
  commission_value: withPlaces(z.number().min(0).max(50), 4),
  swap_enabled: z.boolean(),
  swap_multiplier: withPlaces(z.number().min(0.01).max(10), 4),
  swap_free: z.boolean(),
  swap_free_days: z.int().min(0).max(365),
  is_islamic: z.boolean(),
  max_exposure: withPlaces(z.number().min(0).max(1e15), 2).nullable(),
  net_max_exposure: z.boolean(),
};

/** Unknown fields (is_default, is_active, max_open_positions among them) are dropped, never applied. */
export const GroupCreateSchema = z.object({
  name: groupFields.name,
  description: groupFields.description.optional(),
  currency: groupFields.currency.default('USD'),
  default_leverage: groupFields.default_leverage.default(100),
  margin_call_level: groupFields.margin_call_level.default(100),
  stopout_level: groupFields.stopout_level.default(20),
  commission_type: groupFields.commission_type.default('none'),
  commission_value: groupFields.commission_value.default(0),
  swap_enabled: groupFields.swap_enabled.default(true),
  swap_multiplier: groupFields.swap_multiplier.default(1),
  swap_free: groupFields.swap_free.default(false),
  swap_free_days: groupFields.swap_free_days.default(0),
  is_islamic: groupFields.is_islamic.default(false),
  max_exposure: groupFields.max_exposure.optional(),
  net_max_exposure: groupFields.net_max_exposure.default(false),
});

const GroupPatchSchema = z
  .object(groupFields)
  .partial()
  .extend({
    is_active: z.boolean().optional().describe('Activate a cloned group, or retire one'),
    is_default: z.boolean().optional().describe('At most one group is the default; setting it clears the others'),
    max_open_positions: z.int().min(0).max(100_000).nullable().optional(),
  });

export const GroupSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  description: z.string().nullable(),
  currency: z.string(),
  default_leverage: z.int(),
  margin_call_level: z.number(),
  stopout_level: z.number(),
  commission_type: z.enum(COMMISSION_TYPES),
  commission_value: z.number(),
  swap_enabled: z.boolean(),
  swap_multiplier: z.number(),
  swap_free: z.boolean(),
  swap_free_days: z.int(),
  is_islamic: z.boolean(),
  max_exposure: z.number().nullable(),
  net_max_exposure: z.boolean(),
  max_open_positions: z.int().nullable(),
  is_default: z.boolean(),
  is_active: z.boolean(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

const GroupInstrumentSchema = z.object({
  group_id: z.uuid(),
  symbol: z.string(),
  enabled: z.boolean(),
  spread: z.number(),
  commission_value: z.number().nullable(),
  swap_long: z.number(),
  swap_short: z.number(),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

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
      spread: withPlaces(z.number().min(0).max(100_000), 2).describe('Points added to the quote spread'),
      commission_value: withPlaces(z.number().min(0).max(50), 4)
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
