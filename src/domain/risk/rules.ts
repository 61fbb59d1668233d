import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { findPage } from '../../db/find-page';
import { Group } from '../../entities/group.entity';
import { RiskRule } from '../../entities/risk-rule.entity';
import { RiskRunItem } from '../../entities/risk-run-item.entity';
import { RiskRun } from '../../entities/risk-run.entity';
import type { JobProducer } from '../../jobs/job-producer';
import { RiskApplyJob } from '../../jobs/risk.job';
import { errors, PermanentJobFailure } from '../../platform/errors';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { classedStatement } from './classify';
import {
  assertActionGroups,
  countsOf,
  createRiskRun,
  queueRiskRun,
  RiskPreviewResultSchema,
  riskRunView,
  runInput,
  withAggregateMemory,
} from './preview';
import {
  ActionsSchema,
  ConditionsSchema,
  RISK_CLASSES,
  type RiskClass,
  type RiskRuleInput,
  RiskRuleInputSchema,
  ThresholdsSchema,
} from './rule-input';
import { flushUnique } from '../../db/flush-unique';
import { executeNamed } from '../../db/bound-statement';
import {
  CLASS_DISABLED_ACCOUNTS,
  DISABLE_CLASS_TRADING,
  MOVE_CLASS_TO_GROUP,
  NOTIFY_CLASS,
  RUN_CLASS_COUNTS,
  RUN_CLASSIFIED,
} from './risk.queries';
import { cancelPendingOfDisabledAccounts } from '../orders/pending-orders';

const RuleName = z.string().trim().min(1).max(100);

export const RiskRuleCreateSchema = RiskRuleInputSchema.extend({
  name: RuleName.describe('Unique ignoring case'),
  is_active: z.boolean().default(true).describe('Only an active rule can be applied'),
});

/** A PATCH changes the fields sent; conditions, actions, watchlist and toxic are replaced whole. */
export const RiskRulePatchSchema = z.object({
  name: RuleName.optional(),
  is_active: z.boolean().optional(),
  min_trades_to_classify: RiskRuleInputSchema.shape.min_trades_to_classify.optional(),
  rolling_window_days: RiskRuleInputSchema.shape.rolling_window_days.optional(),
  conditions: ConditionsSchema.optional(),
  actions: ActionsSchema.optional(),
  watchlist: ThresholdsSchema.optional(),
  toxic: ThresholdsSchema.optional(),
});

export const RiskRuleSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  is_active: z.boolean(),
  min_trades_to_classify: z.int(),
  rolling_window_days: z.int(),
  conditions: ConditionsSchema,
  actions: ActionsSchema,
  watchlist: ThresholdsSchema,
  toxic: ThresholdsSchema,
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});
export type RiskRuleView = z.output<typeof RiskRuleSchema>;

function inputOf(rule: RiskRule): RiskRuleInput {
  return RiskRuleInputSchema.parse(rule.input);
}

export function riskRuleView(rule: RiskRule): RiskRuleView {
  const input = inputOf(rule);
  return {
    id: rule.id,
    name: rule.name,
    is_active: rule.isActive,
    min_trades_to_classify: input.min_trades_to_classify,
    rolling_window_days: input.rolling_window_days,
    conditions: input.conditions,
    actions: input.actions,
    watchlist: input.watchlist,
    toxic: input.toxic,
    created_at: rule.createdAt.toISOString(),
    updated_at: rule.updatedAt.toISOString(),
  };
}

function nameTaken(name: string) {
  return errors.conflict('NAME_TAKEN', `A risk rule named "${name}" already exists (names are compared ignoring case)`);
}

export async function findRule(em: EntityManager, id: string): Promise<RiskRule> {
  const rule = await em.findOne(RiskRule, id);
  if (!rule) throw errors.notFound('Risk rule');
  return rule;
}

export async function createRiskRule(
  em: EntityManager,
  actor: StaffCaller,
  body: z.output<typeof RiskRuleCreateSchema>,
): Promise<RiskRuleView> {
  const { name, is_active: isActive, ...rest } = body;
  const input = RiskRuleInputSchema.parse(rest);
  await assertActionGroups(em, input);
  const rule = em.create(RiskRule, {
    name,
    isActive,
    input: input as unknown as Record<string, unknown>,
    createdBy: actor.userId,
  });
  const view = riskRuleView(rule);
  recordAudit(em, actor, { action: 'risk_rule.created', entityType: 'risk_rule', entityId: rule.id, after: view });
  await flushUnique(em, () => nameTaken(name));
  return view;
}

export async function updateRiskRule(
  em: EntityManager,
  actor: StaffCaller,
  id: string,
  patch: z.output<typeof RiskRulePatchSchema>,
): Promise<RiskRuleView> {
  const rule = await findRule(em, id);
  const before = riskRuleView(rule);
  const { name, is_active: isActive, ...fields } = patch;
  const changed = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
  const input = RiskRuleInputSchema.parse({ ...inputOf(rule), ...changed });
  if (changed.actions) await assertActionGroups(em, input);
  rule.input = input as unknown as Record<string, unknown>;
  if (name !== undefined) rule.name = name;
  if (isActive !== undefined) rule.isActive = isActive;
  rule.updatedAt = new Date();
  const view = riskRuleView(rule);
  recordAudit(em, actor, { action: 'risk_rule.updated', entityType: 'risk_rule', entityId: rule.id, before, after: view });
  await flushUnique(em, () => nameTaken(rule.name));
  return view;
}

export async function deleteRiskRule(em: EntityManager, actor: StaffCaller, id: string): Promise<void> {
  const rule = await findRule(em, id);
  recordAudit(em, actor, { action: 'risk_rule.deleted', entityType: 'risk_rule', entityId: rule.id, before: riskRuleView(rule) });
  em.remove(rule);
  await em.flush();
}

const AccountStateSchema = z.object({
  group_id: z.uuid().nullable(),
  trading_disabled: z.boolean(),
});

/** An apply run as its status URL shows it: the preview's fields, the rule, and a page of its accounts. */
export const RiskApplyRunSchema = RiskPreviewResultSchema.extend({
  rule_id: z.uuid(),
  items: z.array(
    z.object({
      login: z.int(),
      risk_class: z.enum(RISK_CLASSES),
      trades: z.int(),
      moved_to_group_id: z.uuid().nullable(),
      notified: z.boolean(),
      trading_disabled: z.boolean(),
      before: AccountStateSchema.nullable().describe(
        'The account as the run found it, before acting (what undoing the run restores); null on runs recorded before this was kept',
      ),
      after: AccountStateSchema.nullable().describe("The account as the run's actions left it; null when before is"),
    }),
  ),
  page: z.int(),
  page_size: z.int(),
  items_total: z.int(),
});
type RiskApplyRunView = z.output<typeof RiskApplyRunSchema>;

/** Before: as classified. After: as the run's actions left it (a move sets the group, a disable the flag). */
function stateChange(i: RiskRunItem) {
  if (i.beforeTradingDisabled === null || i.beforeTradingDisabled === undefined) return { before: null, after: null };
  const before = { group_id: i.beforeGroupId ?? null, trading_disabled: i.beforeTradingDisabled };
  return {
    before,
    after: {
      group_id: i.movedToGroupId ?? before.group_id,
      trading_disabled: before.trading_disabled || i.tradingDisabled,
    },
  };
}

export async function applyRunView(
  em: EntityManager,
  ruleId: string,
  runId: string,
  paging: { page: number; page_size: number; risk_class?: RiskClass | undefined },
): Promise<RiskApplyRunView> {
  const run = await em.findOne(RiskRun, { id: runId, kind: 'apply', ruleId }, { refresh: true });
  if (!run) throw errors.notFound('Apply run');
  const where = { runId, ...(paging.risk_class ? { riskClass: paging.risk_class } : {}) };
  const page = await findPage(em, RiskRunItem, where, paging, { orderBy: { login: 'asc' } }, (i) => ({
    login: Number(i.login),
    risk_class: i.riskClass,
    trades: i.trades,
    moved_to_group_id: i.movedToGroupId ?? null,
    notified: i.notified,
    trading_disabled: i.tradingDisabled,
    ...stateChange(i),
  }));
  return {
    // An apply run is a preview run that then acted: the same fields, its rule and its accounts.
    ...riskRunView(run),
    rule_id: ruleId,
    items: page.items,
    page: page.page,
    page_size: page.page_size,
    items_total: page.total,
  };
}

/**
 * POST /risk/rules/{id}/apply: records an apply run (the rule's input and the window, fixed
 * now), audited, and queues its job after the commit. An inactive rule is 409 RULE_INACTIVE.
 */
export async function startRiskApply(
  em: EntityManager,
  jobs: Pick<JobProducer, 'enqueue'>,
  actor: StaffCaller,
  ruleId: string,
): Promise<{ id: string; status_url: string }> {
  const rule = await findRule(em, ruleId);
  if (!rule.isActive) throw errors.conflict('RULE_INACTIVE', 'This rule is not active: activate it to apply it');
  const run = createRiskRun(em, { kind: 'apply', ruleId: rule.id, input: inputOf(rule), requestedBy: actor.userId });
  recordAudit(em, actor, {
    action: 'risk_rule.applied',
    entityType: 'risk_rule',
    entityId: rule.id,
    after: { run_id: run.id, window_start: run.windowStart.toISOString(), window_end: run.windowEnd.toISOString() },
  });
  await queueRiskRun(em, jobs, RiskApplyJob, run, 'The job queue was unavailable; nothing was applied');
  return { id: run.id, status_url: `/risk/rules/${rule.id}/runs/${run.id}` };
}

/**
 * The worker's half of an apply run. Every step is one SQL statement over the run's items,
 * so no account list or order is held in Node, and each is idempotent:
 * 1. classify into `risk_run_items` (INSERT ... SELECT from the classification), once: a retry
 *    finds the items and keeps them, so the run acts on one classification;
 * 2. per class with actions: move to the group, disable trading, notify (a domain event
 *    `account.risk_classified` for the customer's consumers). Each statement marks the item's
 *    column and changes the account (or writes the event) together, only for items not yet
 *    marked, so a retry after a crash does each action at most once per account;
 * 3. record the counts and complete the run.
 */
export async function runRiskApply(em: EntityManager, runId: string): Promise<void> {
  const run = await em.findOne(RiskRun, { id: runId, kind: 'apply' });
  if (!run) throw new PermanentJobFailure(`no risk apply run ${runId}`);
  if (run.status !== 'running') return;
  const { input, window } = runInput(run);
  const ruleName = (await em.findOne(RiskRule, run.ruleId ?? '', { fields: ['name'] }))?.name ?? null;

  const [{ classified } = { classified: false }] = await executeNamed<{ classified: boolean }>(
    em,
    RUN_CLASSIFIED.bind({ run_id: runId }),
  );
  if (!classified) {
    const insert = classedStatement(
      input,
      window,
      (p) =>
        `insert into risk_run_items (run_id, account_id, login, customer_id, risk_class, trades, notified, trading_disabled,
                                     before_group_id, before_trading_disabled)
         select ${p.add(runId)}::uuid, c.account_id, c.login, c.customer_id, c.risk_class, c.trades, false, false,
                a.group_id, a.trading_disabled
           from classed c join accounts a on a.id = c.account_id
         on conflict do nothing`,
    );
    await withAggregateMemory(em, (tx) => tx.execute(insert.sql, insert.values));
  }

  for (const cls of RISK_CLASSES) {
    const actions = input.actions[cls];
    if (!actions) continue;
    if (actions.move_to_group_id) {
      const group = await em.findOne(Group, { id: actions.move_to_group_id, isActive: true }, { fields: ['id'] });
      if (!group)
        throw new PermanentJobFailure(`The group ${actions.move_to_group_id} to move ${cls} accounts into is gone or inactive`);
      await executeNamed(em, MOVE_CLASS_TO_GROUP.bind({ run_id: runId, risk_class: cls, group_id: group.id }));
    }
    if (actions.disable_trading) {
      await executeNamed(em, DISABLE_CLASS_TRADING.bind({ run_id: runId, risk_class: cls }));
      // After the disabling committed (its own statement), so no order slips in behind the sweep.
      const disabled = await executeNamed<{ account_id: string }>(
        em,
        CLASS_DISABLED_ACCOUNTS.bind({ run_id: runId, risk_class: cls }),
      );
      await cancelPendingOfDisabledAccounts(
        em,
        disabled.map((r) => r.account_id),
      );
    }
    if (actions.notify)
      await executeNamed(
        em,
        NOTIFY_CLASS.bind({ run_id: runId, risk_class: cls, rule_id: run.ruleId ?? null, rule_name: ruleName }),
      );
  }

  const { counts, evaluated } = countsOf(
    await executeNamed<{ risk_class: string; n: number }>(em, RUN_CLASS_COUNTS.bind({ run_id: runId })),
  );
  await em.nativeUpdate(
    RiskRun,
    { id: runId, status: 'running' },
    { status: 'completed', counts, accountsEvaluated: evaluated, completedAt: new Date() },
  );
}
