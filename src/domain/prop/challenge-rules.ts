import type { ChallengeFailure } from '../../entities/prop-challenge.entity';
import { D, dec, money, type Dec } from '../../platform/decimal';

/** What the loss rules read of an active challenge (decimal text, as the database gives it). */
export interface LossRuleInput {
  initial_balance: string;
  day_start_equity: string;
  high_water_mark: string;
  max_daily_loss_pct: string;
  max_total_loss_pct: string;
  total_loss_mode: string;
}

/** What the pass rule reads. */
export interface PassRuleInput {
  initial_balance: string;
  profit_target_pct: string;
  min_trading_days: number;
}

/** The equity below which the daily loss is breached: day start equity - initial x max_daily_loss_pct / 100. */
export function dailyLossFloor(c: LossRuleInput): Dec {
  return money(dec(c.day_start_equity).minus(dec(c.initial_balance).times(c.max_daily_loss_pct).div(100)));
}

/**
 * The equity below which the total loss is breached: initial x (1 - max_total_loss_pct / 100)
 * (`static`), or the high-water mark - initial x max_total_loss_pct / 100 (`trailing`), the mark
 * first raised to `equity` when it is higher: the mark moves on equity, and never down.
 */
export function totalLossFloor(c: LossRuleInput, equity: Dec): Dec {
  const initial = dec(c.initial_balance);
  const allowed = initial.times(c.max_total_loss_pct).div(100);
  if (c.total_loss_mode === 'trailing') return money(D.max(dec(c.high_water_mark), equity).minus(allowed));
  return money(initial.minus(allowed));
}

/**
 * The rule a challenge breaches at `equity`, with the failure snapshot, or null. When both
 * are breached the one with the higher floor is named: equity crossed it first.
 */
export function lossBreach(c: LossRuleInput, equity: Dec, balance: Dec, at: Date): ChallengeFailure | null {
  const daily = dailyLossFloor(c);
  const total = totalLossFloor(c, equity);
  const breached: Array<{ rule: 'daily_loss' | 'total_loss'; floor: Dec }> = [];
  if (equity.lt(daily)) breached.push({ rule: 'daily_loss', floor: daily });
  if (equity.lt(total)) breached.push({ rule: 'total_loss', floor: total });
  if (breached.length === 0) return null;
  const first = breached.reduce((a, b) => (b.floor.gt(a.floor) ? b : a));
  return {
    rule: first.rule,
    threshold: first.floor.toFixed(2),
    equity: money(equity).toFixed(2),
    balance: money(balance).toFixed(2),
    at: at.toISOString(),
  };
}

/** The balance a phase passes at: initial x (1 + profit_target_pct / 100). */
export function passTarget(c: PassRuleInput): Dec {
  return money(dec(c.initial_balance).times(dec(c.profit_target_pct).div(100).plus(1)));
}

/** Whether a phase passes: the target reached with nothing open and enough days with a trade. */
export function passes(c: PassRuleInput, balance: Dec, openOrders: number, tradingDays: number): boolean {
  return openOrders === 0 && balance.gte(passTarget(c)) && tradingDays >= c.min_trading_days;
}
