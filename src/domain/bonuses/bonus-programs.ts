import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { BonusProgram } from '../../entities/bonus-program.entity';
import { dec, money } from '../../platform/decimal';
import { fieldError } from '../../platform/errors';
import { MoneyText } from '../../platform/money-text';
import type { StaffCaller } from '../../platform/caller';
import { recordAudit } from '../audit/audit';
import { Moment } from './moment';
import { iso } from './bonuses';

/** Bonus programmes: the terms a bonus is granted under. */
export const BonusProgramInputSchema = z
  .strictObject({
    name: z.string().min(1).max(200),
    currency: z.string().regex(/^[A-Z]{3}$/),
    kind: z.enum(['fixed', 'deposit_percent']),
    amount: z.number().positive().max(1e12).optional(),
    percent: z.number().positive().max(1000).optional(),
    max_amount: z.number().positive().max(1e12).optional(),
    min_deposit: z.number().positive().max(1e12).optional(),
    group_ids: z.array(z.uuid()).max(1000).default([]),
    trigger: z.enum(['manual', 'deposit', 'promo_code']),
    first_deposit_only: z.boolean().default(false),
    release: z.strictObject({
      mode: z.enum(['on_target', 'per_lot']),
      lots_per_unit: z.number().positive().max(1000),
    }),
    lifetime_days: z.int().positive().max(3650).optional(),
    on_transfer_out: z.enum(['forfeit', 'proportional']).default('forfeit'),
    min_hold_seconds: z
      .int()
      .min(0)
      .max(86_400 * 365)
      .default(60),
    starts_at: Moment.optional(),
    ends_at: Moment.optional(),
    enabled: z.boolean().default(true),
  })
  .superRefine((p, ctx) => {
    if (p.kind === 'fixed' && p.amount === undefined)
      ctx.addIssue({ code: 'custom', path: ['amount'], message: 'A fixed programme needs its amount' });
    if (p.kind === 'deposit_percent' && p.percent === undefined)
      ctx.addIssue({ code: 'custom', path: ['percent'], message: 'A deposit percentage programme needs its percent' });
  });
export type BonusProgramInput = z.output<typeof BonusProgramInputSchema>;

export const BonusProgramSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  currency: z.string(),
  kind: z.enum(['fixed', 'deposit_percent']),
  amount: MoneyText.nullable(),
  percent: z.string().nullable(),
  max_amount: MoneyText.nullable(),
  min_deposit: MoneyText.nullable(),
  group_ids: z.array(z.uuid()),
  trigger: z.enum(['manual', 'deposit', 'promo_code']),
  first_deposit_only: z.boolean(),
  release: z.object({ mode: z.enum(['on_target', 'per_lot']), lots_per_unit: z.string() }),
  lifetime_days: z.int().nullable(),
  on_transfer_out: z.enum(['forfeit', 'proportional']),
  min_hold_seconds: z.int(),
  starts_at: z.iso.datetime().nullable(),
  ends_at: z.iso.datetime().nullable(),
  enabled: z.boolean(),
  created_at: z.iso.datetime(),
});
export type BonusProgramView = z.output<typeof BonusProgramSchema>;

export function programView(p: BonusProgram): BonusProgramView {
  const m = (v: string | null | undefined) => (v === null || v === undefined ? null : dec(v).toFixed(2));
  return {
    id: p.id,
    name: p.name,
    currency: p.currency,
    kind: p.kind,
    amount: m(p.amount),
    percent: p.percent === null || p.percent === undefined ? null : dec(p.percent).toString(),
    max_amount: m(p.maxAmount),
    min_deposit: m(p.minDeposit),
    group_ids: p.groupIds,
    trigger: p.trigger,
    first_deposit_only: p.firstDepositOnly,
    release: { mode: p.releaseMode, lots_per_unit: dec(p.lotsPerUnit).toString() },
    lifetime_days: p.lifetimeDays ?? null,
    on_transfer_out: p.onTransferOut,
    min_hold_seconds: p.minHoldSeconds,
    starts_at: iso(p.startsAt ?? null),
    ends_at: iso(p.endsAt ?? null),
    enabled: p.enabled,
    created_at: p.createdAt.toISOString(),
  };
}

export async function createProgram(em: EntityManager, actor: StaffCaller, input: BonusProgramInput): Promise<BonusProgramView> {
  if (input.starts_at && input.ends_at && new Date(input.ends_at) <= new Date(input.starts_at))
    throw fieldError('body', ['ends_at'], 'ends_at must be after starts_at');
  const text = (v: number | undefined) => (v === undefined ? null : dec(v).toFixed());
  const program = em.create(BonusProgram, {
    name: input.name,
    currency: input.currency,
    kind: input.kind,
    amount: input.amount === undefined ? null : money(input.amount).toFixed(2),
    percent: text(input.percent),
    maxAmount: input.max_amount === undefined ? null : money(input.max_amount).toFixed(2),
    minDeposit: input.min_deposit === undefined ? null : money(input.min_deposit).toFixed(2),
    groupIds: input.group_ids,
    trigger: input.trigger,
    firstDepositOnly: input.first_deposit_only,
    releaseMode: input.release.mode,
    lotsPerUnit: dec(input.release.lots_per_unit).toFixed(),
    lifetimeDays: input.lifetime_days ?? null,
    onTransferOut: input.on_transfer_out,
    minHoldSeconds: input.min_hold_seconds,
    startsAt: input.starts_at ? new Date(input.starts_at) : null,
    endsAt: input.ends_at ? new Date(input.ends_at) : null,
    enabled: input.enabled,
  });
  const view = programView(program);
  recordAudit(em, actor, { action: 'bonus_program.created', entityType: 'bonus_program', entityId: program.id, after: view });
  await em.flush();
  return view;
}

// --- grants ----------------------------------------------------------------------------
