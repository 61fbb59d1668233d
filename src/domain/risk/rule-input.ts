import { z } from 'zod';

/**
 * The risk rule preview input (endpoint 11) with its inner structure (docs/trading-and-money.md,
 * Risk rules), and a saved rule's body. Unknown fields are ignored.
 */
export const RISK_CLASSES = ['toxic', 'watchlist', 'normal', 'unclassified'] as const;
export type RiskClass = (typeof RISK_CLASSES)[number];

const TRADING_KINDS = ['live', 'demo', 'prop'] as const;

/** What an account must meet, every threshold given, to be in a class. At least one. */
export const ThresholdsSchema = z
  .object({
    max_avg_hold_seconds: z
      .number()
      .min(0)
      .max(365 * 86400)
      .optional()
      .describe('Average time from open to close of the closed orders, at most this many seconds'),
    min_win_rate: z.number().min(0).max(1).optional().describe('Share of closed orders with a profit above 0, 0 to 1'),
    min_profit_factor: z
      .number()
      .min(0)
      .max(1_000_000)
      .optional()
      .describe('Gross profit / gross loss of the closed orders (no loss at all counts as unbounded)'),
    min_trades_per_day: z.number().min(0).max(1_000_000).optional().describe('Closed orders in the window / rolling_window_days'),
  })
  .refine((t) => Object.values(t).some((v) => v !== undefined), {
    message: 'Give at least one threshold: max_avg_hold_seconds, min_win_rate, min_profit_factor or min_trades_per_day',
    params: { type: 'value_error' },
  });
export type Thresholds = z.output<typeof ThresholdsSchema>;

export const ConditionsSchema = z
  .object({
    group_ids: z.array(z.uuid()).min(1).max(1000).optional().describe('Only accounts of these groups'),
    symbols: z.array(z.string().min(1).max(32)).min(1).max(1000).optional().describe('Only closed orders of these symbols count'),
    kinds: z.array(z.enum(TRADING_KINDS)).min(1).max(3).optional().describe('Only these kinds of trading account'),
  })
  .describe('Narrows the accounts and orders considered; absent fields do not narrow');
export type Conditions = z.output<typeof ConditionsSchema>;

export const ClassActionsSchema = z.object({
  move_to_group_id: z.uuid().optional().describe('Move the account to this group (it must exist and be active)'),
  notify: z.boolean().optional().describe("Write a notification event for the account's customer"),
  disable_trading: z.boolean().optional().describe('New orders on the account are refused (403 TRADING_DISABLED)'),
});
export type ClassActions = z.output<typeof ClassActionsSchema>;

export const ActionsSchema = z
  .object({
    toxic: ClassActionsSchema.optional(),
    watchlist: ClassActionsSchema.optional(),
    normal: ClassActionsSchema.optional(),
    unclassified: ClassActionsSchema.optional(),
  })
  .describe('What a saved rule does per class when applied; a preview validates them and executes nothing');
export type Actions = z.output<typeof ActionsSchema>;

export const RiskRuleInputSchema = z.object({
  min_trades_to_classify: z.int().min(1).max(1_000_000).describe('Fewer closed orders in the window than this: unclassified'),
  rolling_window_days: z.int().min(1).max(365).describe('The window: the last this many days of closed orders'),
  conditions: ConditionsSchema.default({}),
  actions: ActionsSchema.default({}),
  watchlist: ThresholdsSchema,
  toxic: ThresholdsSchema,
});
export type RiskRuleInput = z.output<typeof RiskRuleInputSchema>;

/** Every group id the actions name, with where it sits in the body. */
export function actionGroupIds(actions: Actions): Array<{ id: string; path: Array<string | number> }> {
  const out: Array<{ id: string; path: Array<string | number> }> = [];
  for (const cls of RISK_CLASSES) {
    const id = actions[cls]?.move_to_group_id;
    if (id) out.push({ id, path: ['actions', cls, 'move_to_group_id'] });
  }
  return out;
}
