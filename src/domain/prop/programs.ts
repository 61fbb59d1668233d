import type { EntityManager } from '@mikro-orm/postgresql';
import { z } from 'zod';
import { Group } from '../../entities/group.entity';
import { PropProgram, type PropPhase } from '../../entities/prop-program.entity';
import { dec, money } from '../../platform/decimal';
import { fieldError } from '../../platform/errors';
import { withPlaces } from '../../platform/decimal-places';
import { assertQuotePathToUsd } from '../accounts/accounts';
import { recordAudit } from '../audit/audit';
import type { StaffCaller } from '../../platform/caller';
import { AMOUNT_MAX } from '../../platform/bounds';
import { CurrencyCode, MoneyText } from '../../platform/money-text';
import type { QuoteStore } from '../prices/quote-store';

/** A percentage with at most two decimals between `min` (exclusive when `above`) and `max`. */
const percent = (min: number, max: number, above: boolean) =>
  withPlaces((above ? z.number().gt(min) : z.number().min(min)).max(max), 2);

/** One phase as a program is created with. */
export const PhaseInputSchema = z
  .object({
    name: z.string().trim().min(1).max(64),
    profit_target_pct: percent(0, 1000, true).describe(
      'Above 0, at most 1000: the balance to reach, in % of the initial balance',
    ),
    max_daily_loss_pct: percent(0, 100, false).describe(
      '0 to 100: how far equity may fall below the day start, in % of the initial balance',
    ),
    max_total_loss_pct: percent(0, 100, false).describe('0 to 100: how far equity may fall in all, in % of the initial balance'),
    total_loss_mode: z
      .enum(['static', 'trailing'])
      .describe(
        '`static`: below the initial balance less the loss; `trailing`: below the high-water mark of equity less the loss',
      ),
    min_trading_days: z
      .int()
      .min(0)
      .max(3650)
      .describe('Days with a trade (UTC days with an order opened or closed) before it can pass'),
    max_trading_days: z
      .int()
      .min(1)
      .max(3650)
      .nullish()
      .describe('Calendar days after the start at which a phase still active fails (`time_limit`); none: no limit'),
  })
  .superRefine((p, ctx) => {
    if (p.max_trading_days !== null && p.max_trading_days !== undefined && p.max_trading_days < p.min_trading_days)
      ctx.addIssue({
        code: 'custom',
        path: ['max_trading_days'],
        message: 'max_trading_days cannot be below min_trading_days: the phase could never pass',
        params: { type: 'value_error' },
      });
  });

export const ProgramInputSchema = z
  .object({
    name: z.string().trim().min(1).max(100),
    currency: CurrencyCode,
    initial_balance: withPlaces(z.number().gt(0).max(AMOUNT_MAX), 2).describe("What each stage's account is funded with"),
    group_id: z.uuid(),
    profit_split_pct: percent(0, 100, true).describe("The trader's share of a funded account's payouts, in %"),
    phases: z.array(PhaseInputSchema).min(1).max(10),
  })
  .meta({
    examples: [
      {
        name: '100k two-step',
        currency: 'USD',
        initial_balance: 100000,
        group_id: '6a1f0b5e-2c3d-4e5f-8a9b-0c1d2e3f4a5b',
        profit_split_pct: 80,
        phases: [
          {
            name: 'Evaluation',
            profit_target_pct: 8,
            max_daily_loss_pct: 5,
            max_total_loss_pct: 10,
            total_loss_mode: 'static',
            min_trading_days: 4,
            max_trading_days: 30,
          },
          {
            name: 'Verification',
            profit_target_pct: 5,
            max_daily_loss_pct: 5,
            max_total_loss_pct: 10,
            total_loss_mode: 'trailing',
            min_trading_days: 4,
          },
        ],
      },
    ],
  });
export type ProgramInput = z.output<typeof ProgramInputSchema>;

export const PhaseSchema = z.object({
  name: z.string(),
  profit_target_pct: z.number(),
  max_daily_loss_pct: z.number(),
  max_total_loss_pct: z.number(),
  total_loss_mode: z.enum(['static', 'trailing']),
  min_trading_days: z.int(),
  max_trading_days: z.int().nullable(),
});

export const ProgramSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  currency: CurrencyCode,
  initial_balance: MoneyText,
  group_id: z.uuid(),
  profit_split_pct: z.number(),
  phases: z.array(PhaseSchema),
  created_at: z.iso.datetime(),
});
export type ProgramView = z.output<typeof ProgramSchema>;

export function programView(p: PropProgram): ProgramView {
  return {
    id: p.id,
    name: p.name,
    currency: p.currency,
    initial_balance: p.initialBalance,
    group_id: p.group.id,
    profit_split_pct: Number(p.profitSplitPct),
    phases: p.phases.map((ph) => ({
      name: ph.name,
      profit_target_pct: Number(ph.profit_target_pct),
      max_daily_loss_pct: Number(ph.max_daily_loss_pct),
      max_total_loss_pct: Number(ph.max_total_loss_pct),
      total_loss_mode: ph.total_loss_mode,
      min_trading_days: ph.min_trading_days,
      max_trading_days: ph.max_trading_days,
    })),
    created_at: p.createdAt.toISOString(),
  };
}

/**
 * POST /prop/programs: a group that does not exist is 422 at `group_id`, a currency with no
 * quoted path to USD (money could not reach the wallet) 422 at `currency`. Audited.
 */
export async function createProgram(
  em: EntityManager,
  quotes: QuoteStore,
  actor: StaffCaller,
  input: ProgramInput,
): Promise<ProgramView> {
  const group = await em.findOne(Group, input.group_id);
  if (!group) throw fieldError('body', ['group_id'], 'No such group');
  await assertQuotePathToUsd(em, quotes, input.currency, true);
  const phases: PropPhase[] = input.phases.map((p) => ({
    name: p.name,
    profit_target_pct: dec(p.profit_target_pct).toFixed(2),
    max_daily_loss_pct: dec(p.max_daily_loss_pct).toFixed(2),
    max_total_loss_pct: dec(p.max_total_loss_pct).toFixed(2),
    total_loss_mode: p.total_loss_mode,
    min_trading_days: p.min_trading_days,
    max_trading_days: p.max_trading_days ?? null,
  }));
  const program = em.create(PropProgram, {
    name: input.name,
    currency: input.currency,
    initialBalance: money(input.initial_balance).toFixed(2),
    group,
    profitSplitPct: dec(input.profit_split_pct).toFixed(2),
    phases,
  });
  const view = programView(program);
  recordAudit(em, actor, { action: 'prop_program.created', entityType: 'prop_program', entityId: program.id, after: view });
  await em.flush();
  return view;
}
