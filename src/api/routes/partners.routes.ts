import { z } from 'zod';
import {
  IbPlanInputSchema,
  IbPlanPatchSchema,
  IbPlanSchema,
  createPlan,
  findPlan,
  listPlans,
  planView,
  updatePlan,
} from '../../domain/partners/plans';
import {
  createPartner,
  listPartners,
  PartnerInputSchema,
  PartnerPatchSchema,
  PartnerSchema,
  partnerView,
  updatePartner,
  visiblePartner,
} from '../../domain/partners/partners';
import {
  partnerClients,
  PartnerClientSchema,
  partnerRewards,
  PartnerRewardSchema,
  partnerSummary,
  PartnerSummarySchema,
  RewardsQuerySchema,
  SubPartnerSchema,
  subPartners,
} from '../../domain/partners/portal';
import { asCustomer, asStaff } from '../http/access';
import { defineRoute, json, type RouteSpec } from '../http/route';

const PlanParam = z.object({ plan_id: z.uuid() });
const PartnerParam = z.object({ partner_id: z.uuid() });
const staff = { kind: 'staff', permission: 'manage_partners' } as const;

export const partnerRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/api/crm/ib-plans',
    operationId: 'createIbPlan',
    summary: 'Create an introducing broker plan',
    description:
      'How partners are paid for the orders of the clients below them. `basis`: `commission_pct` (a percent of the ' +
      'commission the order paid over both sides), `per_lot` (money per closed lot) or `spread_pct` (a percent of the ' +
      "group's spread markup on the order). `levels` give each level's value, level 1 being the partner nearest the client; " +
      'with `commission_pct` they sum to 100 or less (422 otherwise), for the plan and each `symbol_overrides` entry. ' +
      '`max_per_lot` caps the sum of the levels per lot (`per_lot`). `group_ids` limits the orders that accrue to those ' +
      'groups. `charge`: `instant` pays in the close, `daily` at the end of day. Orders held less than ' +
      '`min_hold_seconds` (default 60) accrue 0. Audited.',
    tags: ['partners'],
    access: staff,
    body: IbPlanInputSchema,
    responses: { 201: { description: 'The plan', schema: IbPlanSchema } },
    handler: async ({ body, em, caller }) => json(201, await createPlan(em, asStaff(caller), body)),
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/ib-plans',
    operationId: 'listIbPlans',
    summary: 'Introducing broker plans, oldest first',
    tags: ['partners'],
    access: staff,
    responses: { 200: { description: 'The plans', schema: z.object({ items: z.array(IbPlanSchema) }) } },
    handler: async ({ em }) => json(200, { items: await listPlans(em) }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/ib-plans/{plan_id}',
    operationId: 'getIbPlan',
    summary: 'One introducing broker plan',
    tags: ['partners'],
    access: staff,
    params: PlanParam,
    responses: { 200: { description: 'The plan', schema: IbPlanSchema }, 404: { description: 'No such plan' } },
    handler: async ({ params, em }) => json(200, planView(await findPlan(em, params.plan_id))),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/crm/ib-plans/{plan_id}',
    operationId: 'updateIbPlan',
    summary: 'Change an introducing broker plan',
    description:
      'Only the fields sent change (the basis and currency stay). Orders closed after the change accrue under it; ' +
      'what accrued before stays. Audited.',
    tags: ['partners'],
    access: staff,
    params: PlanParam,
    body: IbPlanPatchSchema,
    responses: { 200: { description: 'The plan after the change', schema: IbPlanSchema }, 404: { description: 'No such plan' } },
    handler: async ({ params, body, em, caller }) => json(200, await updatePlan(em, asStaff(caller), params.plan_id, body)),
  }),
  defineRoute({
    method: 'post',
    path: '/api/crm/partners',
    operationId: 'createPartner',
    summary: 'Make a customer an introducing broker',
    description:
      'The customer becomes a partner under `parent_partner_id` (or at the top), paid by `plan_id`. `code` is what ' +
      'clients sign up with (`ref`), unique whatever its case and kept in upper case; one is generated when absent. ' +
      'A taken code is 409 `PARTNER_CODE_TAKEN`, a customer who is a partner already 409 `PARTNER_EXISTS`. The tree ' +
      'is at most 10 levels deep (422 at `parent_partner_id`). Audited; event `partner.created`.',
    tags: ['partners'],
    access: staff,
    body: PartnerInputSchema,
    responses: {
      201: { description: 'The partner', schema: PartnerSchema },
      409: { description: 'PARTNER_EXISTS or PARTNER_CODE_TAKEN' },
    },
    handler: async ({ body, em, caller }) => json(201, await createPartner(em, asStaff(caller), body)),
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/partners',
    operationId: 'listPartners',
    summary: 'Partners, oldest first',
    description: 'Within your data scope. `parent_partner_id` lists the partners directly below one.',
    tags: ['partners'],
    access: staff,
    query: z.object({ parent_partner_id: z.uuid().optional() }),
    responses: { 200: { description: 'The partners', schema: z.object({ items: z.array(PartnerSchema) }) } },
    handler: async ({ query, em, caller }) => json(200, { items: await listPartners(em, asStaff(caller), query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/partners/{partner_id}',
    operationId: 'getPartner',
    summary: 'One partner',
    tags: ['partners'],
    access: staff,
    params: PartnerParam,
    responses: { 200: { description: 'The partner', schema: PartnerSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em, caller }) =>
      json(200, await partnerView(em, await visiblePartner(em, asStaff(caller), params.partner_id))),
  }),
  defineRoute({
    method: 'patch',
    path: '/api/crm/partners/{partner_id}',
    operationId: 'updatePartner',
    summary: 'Move a partner in the tree or change its plan',
    description:
      'A parent that is the partner itself or one below it is 409 `PARTNER_CYCLE`; a move that takes the tree past ' +
      '10 levels is 422 at `parent_partner_id`. Orders closed after the change accrue along the new chain. Audited.',
    tags: ['partners'],
    access: staff,
    params: PartnerParam,
    body: PartnerPatchSchema,
    responses: {
      200: { description: 'The partner after the change', schema: PartnerSchema },
      404: { description: 'Not found' },
      409: { description: 'PARTNER_CYCLE' },
    },
    handler: async ({ params, body, em, caller }) => json(200, await updatePartner(em, asStaff(caller), params.partner_id, body)),
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/partner',
    operationId: 'getMyPartner',
    summary: 'Your partner profile: code, plan, level and totals',
    description: 'For a customer who is an introducing broker; anyone else gets 404.',
    tags: ['partners'],
    access: { kind: 'customer' },
    responses: {
      200: { description: 'The partner profile', schema: PartnerSummarySchema },
      404: { description: 'Not a partner' },
    },
    handler: async ({ em, caller }) => json(200, await partnerSummary(em, asCustomer(caller).customerId)),
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/partner/clients',
    operationId: 'listMyPartnerClients',
    summary: 'The clients you introduced',
    description:
      'Masked e-mail, country, registration and first deposit dates, and closed lots; never their balances. 404 for a non-partner.',
    tags: ['partners'],
    access: { kind: 'customer' },
    responses: {
      200: { description: 'Your clients', schema: z.object({ items: z.array(PartnerClientSchema) }) },
      404: { description: 'Not a partner' },
    },
    handler: async ({ em, caller }) => json(200, { items: await partnerClients(em, asCustomer(caller).customerId) }),
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/partner/rewards',
    operationId: 'listMyPartnerRewards',
    summary: 'Your rewards, per order and level',
    description:
      'The rewards of orders closed from `from` to `to` (UTC days, inclusive; default the last 30 days, at most a year), ' +
      'newest first, with their state (`accrued`, `paid`, `on_hold`, `excluded`, `void`, `reversed`) and, for 0 or held, ' +
      'the reason. 404 for a non-partner.',
    tags: ['partners'],
    access: { kind: 'customer' },
    query: RewardsQuerySchema,
    responses: {
      200: { description: 'Your rewards', schema: z.object({ items: z.array(PartnerRewardSchema) }) },
      404: { description: 'Not a partner' },
    },
    handler: async ({ query, em, caller }) =>
      json(200, { items: await partnerRewards(em, asCustomer(caller).customerId, query) }),
  }),
  defineRoute({
    method: 'get',
    path: '/customers/me/partner/sub-partners',
    operationId: 'listMySubPartners',
    summary: 'The partners below you',
    description: 'Every partner below you, at any depth, with its code and number of clients. 404 for a non-partner.',
    tags: ['partners'],
    access: { kind: 'customer' },
    responses: {
      200: { description: 'The partners below you', schema: z.object({ items: z.array(SubPartnerSchema) }) },
      404: { description: 'Not a partner' },
    },
    handler: async ({ em, caller }) => json(200, { items: await subPartners(em, asCustomer(caller).customerId) }),
  }),
];
