import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { IB_BASES, IB_CHARGES, IbPlan, type IbLevelValue } from '../../entities/partner.entity';
import { dec, money } from '../../platform/decimal';
import { errors, fieldError } from '../../platform/errors';
import { MoneyText } from '../../platform/money-text';
import type { StaffCaller } from '../../platform/caller';
import { recordAudit } from '../audit/audit';

/** The deepest a partner tree goes, and so the most levels a plan pays. */
export const MAX_LEVELS = 10;

const LevelsSchema = z
  .array(z.strictObject({ level: z.int().min(1).max(MAX_LEVELS), value: z.number().min(0).max(1e9) }))
  .min(1)
  .max(MAX_LEVELS)
  .refine((l) => new Set(l.map((x) => x.level)).size === l.length, 'Each level appears once');

const planFields = {
  name: z.string().min(1).max(200),
  currency: z.string().regex(/^[A-Z]{3}$/),
  basis: z.enum(IB_BASES),
  levels: LevelsSchema,
  max_per_lot: z.number().positive().max(1e9).nullable().optional(),
  group_ids: z.array(z.uuid()).max(1000).nullable().optional(),
  symbol_overrides: z
    .record(z.string().regex(/^[A-Za-z0-9._-]{1,32}$/), LevelsSchema)
    .nullable()
    .optional()
    .describe("Per symbol, the levels that replace the plan's own for orders in it"),
  charge: z.enum(IB_CHARGES),
  min_hold_seconds: z
    .int()
    .min(0)
    .max(86_400 * 365)
    .default(60),
};

export const IbPlanInputSchema = z.strictObject(planFields).meta({
  examples: [
    {
      name: 'Three-level commission share',
      currency: 'USD',
      basis: 'commission_pct',
      levels: [
        { level: 1, value: 50 },
        { level: 2, value: 30 },
        { level: 3, value: 20 },
      ],
      symbol_overrides: { XAUUSD: [{ level: 1, value: 40 }] },
      charge: 'daily',
      min_hold_seconds: 60,
    },
  ],
});
export const IbPlanPatchSchema = z.strictObject({
  name: planFields.name.optional(),
  levels: LevelsSchema.optional(),
  max_per_lot: planFields.max_per_lot,
  group_ids: planFields.group_ids,
  symbol_overrides: planFields.symbol_overrides,
  charge: planFields.charge.optional(),
  min_hold_seconds: z
    .int()
    .min(0)
    .max(86_400 * 365)
    .optional(),
});

export const IbLevelSchema = z.object({ level: z.int(), value: z.string() });
export const IbPlanSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  currency: z.string(),
  basis: z.enum(IB_BASES),
  levels: z.array(IbLevelSchema),
  max_per_lot: MoneyText.nullable(),
  group_ids: z.array(z.uuid()).nullable(),
  symbol_overrides: z.record(z.string(), z.array(IbLevelSchema)).nullable(),
  charge: z.enum(IB_CHARGES),
  min_hold_seconds: z.int(),
  created_at: z.iso.datetime(),
});
export type IbPlanView = z.output<typeof IbPlanSchema>;

export function planView(p: IbPlan): IbPlanView {
  return {
    id: p.id,
    name: p.name,
    currency: p.currency,
    basis: p.basis,
    levels: p.levels,
    max_per_lot: p.maxPerLot ? dec(p.maxPerLot).toFixed(2) : null,
    group_ids: p.groupIds ?? null,
    symbol_overrides: p.symbolOverrides ?? null,
    charge: p.charge,
    min_hold_seconds: p.minHoldSeconds,
    created_at: p.createdAt.toISOString(),
  };
}

const levelText = (levels: Array<{ level: number; value: number }>): IbLevelValue[] =>
  [...levels].sort((a, b) => a.level - b.level).map((l) => ({ level: l.level, value: dec(l.value).toFixed() }));

/**
 * A plan paying a share of commission gives away at most the whole commission: the levels'
 * percents sum to 100 or less, for the plan and for each symbol override.
 */
function checkShares(basis: string, levels: IbLevelValue[], overrides: Record<string, IbLevelValue[]> | null): void {
  if (basis !== 'commission_pct') return;
  const over = (l: IbLevelValue[]) => l.reduce((s, x) => s.plus(x.value), dec(0)).gt(100);
  if (over(levels)) throw fieldError('body', ['levels'], 'The levels of a commission share plan sum to 100 or less');
  for (const [symbol, l] of Object.entries(overrides ?? {}))
    if (over(l))
      throw fieldError('body', ['symbol_overrides', symbol], 'The levels of a commission share plan sum to 100 or less');
}

function overridesText(o: Record<string, Array<{ level: number; value: number }>> | null | undefined) {
  if (!o) return null;
  return Object.fromEntries(Object.entries(o).map(([s, l]) => [s.toUpperCase(), levelText(l)]));
}

export async function createPlan(em: EntityManager, actor: StaffCaller, input: z.output<typeof IbPlanInputSchema>) {
  const levels = levelText(input.levels);
  const overrides = overridesText(input.symbol_overrides);
  checkShares(input.basis, levels, overrides);
  const plan = em.create(IbPlan, {
    name: input.name,
    currency: input.currency,
    basis: input.basis,
    levels,
    maxPerLot: input.max_per_lot ? money(input.max_per_lot).toFixed(2) : null,
    groupIds: input.group_ids ?? null,
    symbolOverrides: overrides,
    charge: input.charge,
    minHoldSeconds: input.min_hold_seconds,
  });
  const view = planView(plan);
  recordAudit(em, actor, { action: 'ib_plan.created', entityType: 'ib_plan', entityId: plan.id, after: view });
  await em.flush();
  return view;
}

export async function findPlan(em: EntityManager, id: string): Promise<IbPlan> {
  const plan = await em.findOne(IbPlan, id);
  if (!plan) throw errors.notFound('Plan');
  return plan;
}

/** Changes apply to orders closed after it: what accrued stays as it was. */
export async function updatePlan(em: EntityManager, actor: StaffCaller, id: string, input: z.output<typeof IbPlanPatchSchema>) {
  const plan = await findPlan(em, id);
  const before = planView(plan);
  if (input.name !== undefined) plan.name = input.name;
  if (input.levels !== undefined) plan.levels = levelText(input.levels);
  if (input.max_per_lot !== undefined) plan.maxPerLot = input.max_per_lot ? money(input.max_per_lot).toFixed(2) : null;
  if (input.group_ids !== undefined) plan.groupIds = input.group_ids;
  if (input.symbol_overrides !== undefined) plan.symbolOverrides = overridesText(input.symbol_overrides);
  if (input.charge !== undefined) plan.charge = input.charge;
  if (input.min_hold_seconds !== undefined) plan.minHoldSeconds = input.min_hold_seconds;
  checkShares(plan.basis, plan.levels, plan.symbolOverrides ?? null);
  const view = planView(plan);
  recordAudit(em, actor, { action: 'ib_plan.updated', entityType: 'ib_plan', entityId: id, before, after: view });
  await em.flush();
  return view;
}

export async function listPlans(em: EntityManager): Promise<IbPlanView[]> {
  return (await em.find(IbPlan, {}, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: 500 })).map(planView);
}
