import type { Group } from '../../entities/group.entity';
import { dec, money, type Dec } from '../../platform/decimal';
import { nightsHeld, swapNights, swapWaived, type RolloverSettings } from './rollover';

export interface RolloverOfDate {
  tradingDate: string;
  /** Orders opened at or after it are not in this rollover. */
  cutoffAt: Date;
  settings: RolloverSettings;
}

/** An open order as the rollover reads it (OPEN_ORDERS_OF_CHUNK). */
export interface RolloverOrder {
  ticket: string;
  symbol: string;
  cmd: 0 | 1;
  volume: string;
  open_price: string;
  contract_size: string;
  opened_at: Date | string;
  swap_long: string | null;
  swap_short: string | null;
  /** Opened before the rollover started and not booked for the date yet. */
  due: boolean;
}

/**
 * The swap one order owes for the rollover of a date: the group
 * instrument's swap_long (buys) or swap_short (sells), money in the account currency per lot
 * per night, x volume x the group's swap_multiplier x nights, rounded half-even to cents. Zero
 * when the group has swaps off, the night is a weekend, or a swap-free term waives it.
 */
export function swapOf(order: RolloverOrder, group: Group, rollover: RolloverOfDate): Dec {
  const nights = swapNights(rollover.tradingDate, rollover.settings.tripleSwapDay);
  if (!group.swapEnabled || nights === 0) return money(0);
  const held = nightsHeld(new Date(order.opened_at), rollover.tradingDate, rollover.settings.rolloverTime);
  if (swapWaived(group, held)) return money(0);
  const rate = order.cmd === 0 ? order.swap_long : order.swap_short;
  if (rate === null) return money(0);
  return money(dec(rate).times(order.volume).times(group.swapMultiplier).times(nights));
}
