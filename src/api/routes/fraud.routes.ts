import { z } from 'zod';
import { FIELDS_DESCRIPTION } from '../../domain/fraud/fields';
import {
  CaseListQuerySchema,
  CasePatchSchema,
  FraudCaseSchema,
  fraudCaseView,
  ResolveCaseSchema,
  resolveCase,
  updateCase,
} from '../../domain/fraud/cases';
import {
  createFraudRule,
  deleteFraudRule,
  FRAUD_LISTS,
  FraudListItemsSchema,
  FraudRuleInputSchema,
  FraudRulePatchSchema,
  FraudRuleSchema,
  fraudRuleView,
  MAX_FRAUD_RULES,
  readFraudList,
  replaceFraudList,
  updateFraudRule,
} from '../../domain/fraud/rules';
import { CustomerLinkSchema, customerLinks, MAX_LINKS } from '../../domain/fraud/links';
import { Customer } from '../../entities/customer.entity';
import { FraudPreviewResultSchema, FraudPreviewSchema, previewFraudRule } from '../../domain/fraud/preview';
import { revokeSessions } from '../../domain/identity/sessions';
import { FraudCase, FraudRule } from '../../entities/fraud.entity';
import { Session } from '../../entities/session.entity';
import { errors } from '../../platform/errors';
import { asStaff } from '../http/access';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { customerScopeOf, ownerInScopeOr404 } from '../../platform/customer-scope';
import { customersInScope } from '../../domain/customers/customers';

const RULES =
  'A rule is checked at one `event` (`signup`, `login`, `deposit` (a deposit intent), `withdrawal`, `transfer`, ' +
  '`bonus_grant`, `promo_redeem`, `ib_accrual`, `verification_change` (a staff change of a verification level)). A ' +
  'change of a rule or a list decides the next evaluation in every process. Evaluation order: the allow list (`allowed_ips`), then the block ' +
  'lists, then the enabled rules of the event by `position` (then age), then `allow`; the first match decides. ' +
  '`match: all` needs every condition, `any` one. A condition compares a field with `value` by `op` (`eq`, `neq` and ' +
  '`in` compare text without case; `gt`, `gte`, `lt`, `lte` need a number). **A field without a value never matches**, ' +
  'whatever the operator (so `neq` on a missing field is false). Outcomes: `block` refuses with 403 `FRAUD_BLOCKED` and ' +
  'a sentence naming no rule; `review` holds the action (a withdrawal stays `pending` with `review_reason`, a deposit ' +
  'intent goes to `review`, a sign-up creates its customer `close_only`, a promo redemption or a bonus grant is ' +
  "`on_hold` with no credit; a verification change stands) and opens or extends the customer's case; `allow` lets " +
  'it through. ' +
  `Fields: ${FIELDS_DESCRIPTION}.`;

const RuleId = z.object({ rule_id: z.uuid() });
const CaseId = z.object({ case_id: z.uuid() });

export const fraudRoutes: RouteSpec[] = [
  defineRoute({
    method: 'put',
    path: '/api/backoffice/fraud/lists/{list}/items',
    operationId: 'replaceFraudList',
    summary: 'Replace a fraud list',
    description:
      '`allowed_ips` (shared NAT: such an address is let through the lists and rules, and is never evidence of a link), ' +
      '`blocked_ips`, `blocked_cidrs` (IPv4 or IPv6 ranges), `blocked_devices` (X-Device-Id values), `blocked_countries` ' +
      "(ISO 3166-1 alpha-2, matched against the customer's country), `blocked_email_domains`, `verification_exceptions` " +
      '(staff user ids or emails whose changes of a verification level the built-in rule leaves alone). Audited; the ' +
      'next evaluation in every process reads the new list.',
    tags: ['fraud'],
    access: { kind: 'staff', permission: 'manage_fraud_rules' },
    params: z.object({ list: z.enum(FRAUD_LISTS) }),
    body: FraudListItemsSchema,
    responses: { 200: { description: 'The list as stored', schema: FraudListItemsSchema } },
    handler: async ({ params, body, em, caller }) =>
      json(200, await replaceFraudList(em, asStaff(caller), params.list, body.items)),
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/fraud/lists/{list}/items',
    operationId: 'getFraudList',
    summary: 'Read a fraud list',
    tags: ['fraud'],
    access: { kind: 'staff', permission: 'manage_fraud_rules' },
    params: z.object({ list: z.enum(FRAUD_LISTS) }),
    responses: { 200: { description: 'The list', schema: FraudListItemsSchema } },
    handler: async ({ params, em }) => json(200, await readFraudList(em, params.list)),
  }),
  defineRoute({
    method: 'post',
    path: '/api/backoffice/fraud/rules',
    operationId: 'createFraudRule',
    summary: 'Create a fraud rule',
    description: `${RULES} At most ${MAX_FRAUD_RULES} rules (409 \`FRAUD_RULE_LIMIT\`). Audited.`,
    tags: ['fraud'],
    access: { kind: 'staff', permission: 'manage_fraud_rules' },
    body: FraudRuleInputSchema,
    responses: { 201: { description: 'Created', schema: FraudRuleSchema } },
    handler: async ({ body, em, caller }) => json(201, fraudRuleView(await createFraudRule(em, asStaff(caller), body))),
  }),
  defineRoute({
    method: 'post',
    path: '/api/backoffice/fraud/rules/preview',
    operationId: 'previewFraudRule',
    summary: 'Dry-run a fraud rule over the stored evaluations of its event (writes nothing)',
    description:
      'Replays `rule` over the evaluations of its event stored in the last `days` (at most 90): an evaluation the ' +
      'rule matches counts under its action, any other under `would_allow`. A field counts with the value recorded at ' +
      'the evaluation (every field an enabled rule of the event read then, and the raw signals: customer, device, ' +
      'address, amount); a field not recorded has no value there and never matches, and `missing_fields` counts the ' +
      `evaluations that lacked one. ${RULES}`,
    tags: ['fraud'],
    access: { kind: 'staff', permission: 'manage_fraud_rules' },
    body: FraudPreviewSchema,
    responses: { 200: { description: 'What the rule would have decided', schema: FraudPreviewResultSchema } },
    handler: async ({ body, em }) => json(200, await previewFraudRule(em, body)),
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/fraud/rules',
    operationId: 'listFraudRules',
    summary: 'The fraud rules, by event and position (the built-in ones included, disabled until enabled)',
    description: RULES,
    tags: ['fraud'],
    access: { kind: 'staff', permission: 'manage_fraud_rules' },
    responses: { 200: { description: 'Every rule', schema: z.object({ items: z.array(FraudRuleSchema) }) } },
    handler: async ({ em }) =>
      json(200, {
        items: (await em.find(FraudRule, {}, { orderBy: { event: 'asc', position: 'asc', createdAt: 'asc' } })).map(
          fraudRuleView,
        ),
      }),
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/fraud/rules/{rule_id}',
    operationId: 'getFraudRule',
    summary: 'One fraud rule',
    tags: ['fraud'],
    access: { kind: 'staff', permission: 'manage_fraud_rules' },
    params: RuleId,
    responses: { 200: { description: 'The rule', schema: FraudRuleSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em }) => {
      const rule = await em.findOne(FraudRule, params.rule_id);
      if (!rule) throw errors.notFound('Fraud rule');
      return json(200, fraudRuleView(rule));
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/api/backoffice/fraud/rules/{rule_id}',
    operationId: 'updateFraudRule',
    summary: 'Change a fraud rule (its version rises)',
    description: `Only the fields sent change; \`event\` cannot. ${RULES}`,
    tags: ['fraud'],
    access: { kind: 'staff', permission: 'manage_fraud_rules' },
    params: RuleId,
    body: FraudRulePatchSchema,
    responses: { 200: { description: 'The rule after the change', schema: FraudRuleSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, body, em, caller }) =>
      json(200, fraudRuleView(await updateFraudRule(em, asStaff(caller), params.rule_id, body))),
  }),
  defineRoute({
    method: 'delete',
    path: '/api/backoffice/fraud/rules/{rule_id}',
    operationId: 'deleteFraudRule',
    summary: 'Delete a fraud rule (its past evaluations keep its id and version)',
    tags: ['fraud'],
    access: { kind: 'staff', permission: 'manage_fraud_rules' },
    params: RuleId,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'Not found' } },
    handler: async ({ params, em, caller }) => {
      await deleteFraudRule(em, asStaff(caller), params.rule_id);
      return json(204, undefined);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/fraud/cases',
    operationId: 'listFraudCases',
    summary: 'Fraud review cases, newest first (at most 500)',
    tags: ['fraud'],
    access: { kind: 'staff', permission: 'review_fraud_cases' },
    query: CaseListQuerySchema,
    responses: { 200: { description: 'Cases', schema: z.object({ items: z.array(FraudCaseSchema) }) } },
    handler: async ({ query, em, caller }) => {
      const where: Record<string, unknown> = {};
      if (query.status) where['status'] = query.status;
      if (query.assignee === 'me') where['assigneeId'] = asStaff(caller).userId;
      else if (query.assignee === 'unassigned') where['assigneeId'] = null;
      else if (query.assignee) where['assigneeId'] = query.assignee;
      const cases = await em.find(FraudCase, where, { orderBy: { createdAt: 'desc' }, limit: 500 });
      return json(200, { items: cases.map(fraudCaseView) });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/backoffice/fraud/cases/{case_id}',
    operationId: 'getFraudCase',
    summary: 'One fraud case',
    tags: ['fraud'],
    access: { kind: 'staff', permission: 'review_fraud_cases' },
    params: CaseId,
    responses: { 200: { description: 'The case', schema: FraudCaseSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em }) => {
      const c = await em.findOne(FraudCase, params.case_id);
      if (!c) throw errors.notFound('Case');
      return json(200, fraudCaseView(c));
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/api/backoffice/fraud/cases/{case_id}',
    operationId: 'updateFraudCase',
    summary: 'Assign a case, or move it: open ⇄ investigating, or discarded',
    description: 'A resolved or discarded case is 409 `CASE_CLOSED`. Audited.',
    tags: ['fraud'],
    access: { kind: 'staff', permission: 'review_fraud_cases' },
    params: CaseId,
    body: CasePatchSchema,
    responses: { 200: { description: 'The case', schema: FraudCaseSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, body, em, caller }) =>
      json(200, fraudCaseView(await updateCase(em, asStaff(caller), params.case_id, body))),
  }),
  defineRoute({
    method: 'post',
    path: '/api/backoffice/fraud/cases/{case_id}/resolve',
    operationId: 'resolveFraudCase',
    summary: 'Resolve a case and apply its actions in one transaction',
    description:
      "`block_customer` sets the customer's access to `no_login` (its sessions end); `disable_trading` refuses new orders " +
      'on its trading accounts; `forfeit_bonuses` forfeits its active, held and pending bonuses (`bonus.forfeited`, the ' +
      'unreleased credit of an active one leaves with `credit_out`); `release_holds` lets its withdrawals held for ' +
      'review go to staff approval as usual and grants its held bonuses and promo redemptions now (a redemption waiting ' +
      'for a deposit becomes `armed` again). A `fraud` verdict without `release_holds` voids the held bonuses ' +
      '(`cancelled`) and promo redemptions (`void`); a `legitimate` one without it leaves them held. Forfeiting runs ' +
      'before releasing. `clawback_ib` is applied by the partner feature where installed. Audited; event ' +
      '`fraud.case_resolved`. A resolved or discarded case is 409 `CASE_CLOSED`.',
    tags: ['fraud'],
    access: { kind: 'staff', permission: 'review_fraud_cases' },
    params: CaseId,
    body: ResolveCaseSchema,
    responses: {
      200: { description: 'The resolved case', schema: FraudCaseSchema, example: { status: 'resolved' } },
      404: { description: 'Not found' },
    },
    handler: async ({ params, body, em, caller, services }) => {
      const { fraudCase, revokeSessionsOf } = await resolveCase(em, asStaff(caller), params.case_id, body);
      if (revokeSessionsOf) {
        const sessions = await em.find(
          Session,
          { principalType: 'customer', principalId: revokeSessionsOf, revokedAt: null },
          { fields: ['id'] },
        );
        await revokeSessions(
          em,
          services.identity,
          sessions.map((s) => s.id),
          'access_no_login',
        );
      }
      return json(200, fraudCaseView(fraudCase));
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/crm/customers/{customer_id}/links',
    operationId: 'getCustomerLinks',
    summary: 'Other customers linked to this one, with masked evidence',
    description:
      'Other customers sharing a device id, an exact address (both seen within 30 days), an IPv4 /24 or IPv6 /48 (within ' +
      '7 days), a payment instrument fingerprint, a withdrawal destination fingerprint, a phone or a document number. ' +
      `Addresses on the \`allowed_ips\` list are never evidence. One entry per customer and evidence, newest first, at most ${MAX_LINKS}.`,
    tags: ['fraud'],
    access: { kind: 'staff', permission: 'review_fraud_cases' },
    params: z.object({ customer_id: z.uuid() }),
    responses: {
      200: { description: 'The links', schema: z.object({ items: z.array(CustomerLinkSchema) }) },
      404: { description: 'Not found' },
    },
    handler: async ({ params, em, caller }) => {
      const scope = customerScopeOf(caller);
      await ownerInScopeOr404(em, scope, 'customers', params.customer_id, 'Customer');
      const links = await customerLinks(em, params.customer_id);
      // Linked customers outside the reviewer's scope are left out, as every list is filtered by it.
      const visible = new Set(
        (
          await em.find(
            Customer,
            { $and: [{ id: { $in: [...new Set(links.map((l) => l.customer_id))] } }, customersInScope(scope)] },
            { fields: ['id'] },
          )
        ).map((c) => c.id),
      );
      return json(200, { items: links.filter((l) => visible.has(l.customer_id)) });
    },
  }),
];
