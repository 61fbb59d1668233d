import { z } from 'zod';
import {
  readRiskRun,
  riskPreviewAccepted,
  RiskPreviewResultSchema,
  riskRunView,
  RiskRunAcceptedSchema,
  startRiskPreview,
} from '../../domain/risk/preview';
import { RISK_CLASSES, RiskRuleInputSchema } from '../../domain/risk/rule-input';
import {
  applyRunView,
  createRiskRule,
  deleteRiskRule,
  findRule,
  RiskApplyRunSchema,
  RiskRuleCreateSchema,
  RiskRulePatchSchema,
  RiskRuleSchema,
  riskRuleView,
  startRiskApply,
  updateRiskRule,
} from '../../domain/risk/rules';
import { RiskRule } from '../../entities/risk-rule.entity';
import { asStaff } from '../http/access';
import { findPage } from '../../db/find-page';
import { pageQuery, pageSchema } from '../http/paging';
import { defineRoute, json, type RouteSpec } from '../http/route';
import { runAndReply } from '../http/run-reply';

const CLASSIFY =
  'Classifies every trading account (wallets are not) over the closed orders of the last `rolling_window_days`: ' +
  'fewer than `min_trades_to_classify` of them is `unclassified`; otherwise `toxic` if the account meets every threshold ' +
  'in `toxic`, else `watchlist` if it meets every threshold in `watchlist`, else `normal`. Thresholds (at least one per ' +
  'class): `max_avg_hold_seconds` (average open-to-close time), `min_win_rate` (0 to 1: share of orders closed with a ' +
  'profit), `min_profit_factor` (gross profit / gross loss; no loss at all is unbounded), `min_trades_per_day` ' +
  '(closed orders / rolling_window_days). `conditions` narrows the accounts (`group_ids`, `kinds`) and the orders ' +
  '(`symbols`) considered; `actions` maps a class to `move_to_group_id` (an active group), `notify`, ' +
  '`disable_trading`. A value out of bounds is 422 at its exact path, e.g. `["body", "toxic", "min_win_rate"]`.';

const RuleIdParam = z.object({ rule_id: z.uuid() });

export const riskRoutes: RouteSpec[] = [
  defineRoute({
    method: 'post',
    path: '/risk/rules/preview',
    operationId: 'previewRiskRule',
    summary: 'Dry-run a risk rule: accounts per class (endpoint 11)',
    description:
      `${CLASSIFY}\n\n` +
      'The classification runs in a worker (queue `risk`) as one aggregate query over the closed orders; the request ' +
      'records a run (its input and window, fixed now) and waits for it up to RISK_PREVIEW_WAIT_MS (30 s), then answers ' +
      '202 with the run id, and `GET /risk/previews/{run_id}` gives the result. Deterministic, and nothing is written ' +
      'but the run record: `actions` are validated, never executed.',
    tags: ['risk'],
    access: { kind: 'staff', permission: 'preview_risk_rules' },
    body: RiskRuleInputSchema,
    responses: {
      200: { description: 'Classified', schema: RiskPreviewResultSchema },
      202: { description: 'Still running', schema: RiskRunAcceptedSchema },
    },
    handler: ({ body, em, services, caller }) =>
      runAndReply(startRiskPreview(em, services.jobs, body, asStaff(caller).userId), {
        queueEvents: services.queueEvents,
        waitMs: services.config.riskPreviewWaitMs,
        read: async (runId) => riskRunView(await readRiskRun(em, runId, 'preview')),
        isDone: (run) => run.status === 'completed',
        accepted: riskPreviewAccepted,
      }),
  }),
  defineRoute({
    method: 'get',
    path: '/risk/previews/{run_id}',
    operationId: 'getRiskPreview',
    summary: 'The result of a risk rule preview, as far as it has got',
    tags: ['risk'],
    access: { kind: 'staff', permission: 'preview_risk_rules' },
    params: z.object({ run_id: z.uuid() }),
    responses: { 200: { description: 'The run', schema: RiskPreviewResultSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em }) => json(200, riskRunView(await readRiskRun(em, params.run_id, 'preview'))),
  }),
  defineRoute({
    method: 'post',
    path: '/risk/rules',
    operationId: 'createRiskRule',
    summary: 'Save a risk rule: the preview input with a name and is_active',
    description: `${CLASSIFY}\n\nNames are unique ignoring case (409 NAME_TAKEN). Audited.`,
    tags: ['risk'],
    access: { kind: 'staff', permission: 'manage_risk_rules' },
    body: RiskRuleCreateSchema,
    responses: { 201: { description: 'Saved', schema: RiskRuleSchema }, 409: { description: 'NAME_TAKEN' } },
    handler: async ({ body, em, caller }) => json(201, await createRiskRule(em, asStaff(caller), body)),
  }),
  defineRoute({
    method: 'get',
    path: '/risk/rules',
    operationId: 'listRiskRules',
    summary: 'Saved risk rules, by name',
    tags: ['risk'],
    access: { kind: 'staff', permission: 'manage_risk_rules' },
    query: z.object({ is_active: z.enum(['true', 'false']).optional(), ...pageQuery() }),
    responses: { 200: { description: 'A page of rules', schema: pageSchema(RiskRuleSchema) } },
    handler: async ({ query, em }) =>
      json(
        200,
        await findPage(
          em,
          RiskRule,
          query.is_active === undefined ? {} : { isActive: query.is_active === 'true' },
          query,
          { orderBy: { name: 'asc', id: 'asc' } },
          riskRuleView,
        ),
      ),
  }),
  defineRoute({
    method: 'get',
    path: '/risk/rules/{rule_id}',
    operationId: 'getRiskRule',
    summary: 'One saved risk rule',
    tags: ['risk'],
    access: { kind: 'staff', permission: 'manage_risk_rules' },
    params: RuleIdParam,
    responses: { 200: { description: 'The rule', schema: RiskRuleSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, em }) => json(200, riskRuleView(await findRule(em, params.rule_id))),
  }),
  defineRoute({
    method: 'patch',
    path: '/risk/rules/{rule_id}',
    operationId: 'updateRiskRule',
    summary: 'Change a saved risk rule',
    description:
      'Only the fields sent change; `conditions`, `actions`, `watchlist` and `toxic` are replaced whole. Runs already ' +
      'recorded keep the input they ran with. Audited.',
    tags: ['risk'],
    access: { kind: 'staff', permission: 'manage_risk_rules' },
    params: RuleIdParam,
    body: RiskRulePatchSchema,
    responses: {
      200: { description: 'The rule after the change', schema: RiskRuleSchema },
      404: { description: 'Not found' },
      409: { description: 'NAME_TAKEN' },
    },
    handler: async ({ params, body, em, caller }) => json(200, await updateRiskRule(em, asStaff(caller), params.rule_id, body)),
  }),
  defineRoute({
    method: 'delete',
    path: '/risk/rules/{rule_id}',
    operationId: 'deleteRiskRule',
    summary: 'Delete a saved risk rule',
    description: 'Audited. What its apply runs already did stays done (and recorded).',
    tags: ['risk'],
    access: { kind: 'staff', permission: 'manage_risk_rules' },
    params: RuleIdParam,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'Not found' } },
    handler: async ({ params, em, caller }) => {
      await deleteRiskRule(em, asStaff(caller), params.rule_id);
      return { status: 204 };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/risk/rules/{rule_id}/apply',
    operationId: 'applyRiskRule',
    summary: 'Apply a saved rule: classify every account and act per class',
    description:
      'Records an apply run (the rule as it is now, the window ending now), audited, and queues it on the `risk` queue ' +
      '(202 with the run id and its status URL). The worker classifies exactly like the preview, records each ' +
      "account's class, then executes the rule's actions per class: `move_to_group_id` moves the account into the " +
      'group, `disable_trading` makes new orders on it 403 `TRADING_DISABLED`, `notify` writes an ' +
      "`account.risk_classified` event for the account's customer. Each action runs at most once per account, also " +
      'when the job is retried, and the run records which ran. An inactive rule is 409 `RULE_INACTIVE`.',
    tags: ['risk'],
    access: { kind: 'staff', permission: 'manage_risk_rules' },
    params: RuleIdParam,
    responses: {
      202: { description: 'Queued', schema: RiskRunAcceptedSchema },
      404: { description: 'Not found' },
      409: { description: 'RULE_INACTIVE' },
    },
    handler: async ({ params, em, services, caller }) =>
      json(202, await startRiskApply(em, services.jobs, asStaff(caller), params.rule_id)),
  }),
  defineRoute({
    method: 'get',
    path: '/risk/rules/{rule_id}/runs/{run_id}',
    operationId: 'getRiskApplyRun',
    summary: 'An apply run: counts per class and, per account, its class and the actions done',
    tags: ['risk'],
    access: { kind: 'staff', permission: 'manage_risk_rules' },
    params: z.object({ rule_id: z.uuid(), run_id: z.uuid() }),
    query: z.object({ risk_class: z.enum(RISK_CLASSES).optional(), ...pageQuery() }),
    responses: { 200: { description: 'The run', schema: RiskApplyRunSchema }, 404: { description: 'Not found' } },
    handler: async ({ params, query, em }) => json(200, await applyRunView(em, params.rule_id, params.run_id, query)),
  }),
];
