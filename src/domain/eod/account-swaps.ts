import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../../entities/account.entity';
import type { Group } from '../../entities/group.entity';
import { dec, money } from '../../platform/decimal';
import { executeNamed } from '../../db/bound-statement';
import { postToLedger } from '../ledger/ledger';
import { INSERT_SWAP_BOOKINGS, ORDERS_DUE_SWAP } from './eod.queries';
import { nightsHeld, swapNights, swapWaived, type RolloverSettings } from './rollover';

export interface RolloverOfDate {
  tradingDate: string;
  /** Orders opened at or after it are not in this rollover. */
  cutoffAt: Date;
  settings: RolloverSettings;
}

interface DueRow {
  ticket: string;
  cmd: number;
  volume: string;
  opened_at: Date | string;
  swap_long: string | null;
  swap_short: string | null;
}

/**
 * The swap one order owes for the rollover of a date (decisions, section 13): the group
 * instrument's swap_long (buys) or swap_short (sells), money in the account currency per lot
 * per night, x volume x the group's swap_multiplier x nights. Zero when the group has swaps
 * off, the night is a weekend, or a swap-free term waives it.
 */
export function swapOf(order: DueRow, group: Group, rollover: RolloverOfDate) {
  const nights = swapNights(rollover.tradingDate, rollover.settings.tripleSwapDay);
  if (!group.swapEnabled || nights === 0) return money(0);
  const held = nightsHeld(new Date(order.opened_at), rollover.tradingDate, rollover.settings.rolloverTime);
  if (swapWaived(group, held)) return money(0);
  const rate = order.cmd === 0 ? order.swap_long : order.swap_short;
  if (rate === null) return money(0);
  return money(dec(rate).times(order.volume).times(group.swapMultiplier).times(nights));
}

/**
 * Books the account's swaps of the rollover: one ledger row of kind `swap` per order that owes
 * one, referencing the order as its profit row does, in the caller's transaction (which holds
 * the account row locked). The key (order, date) is taken first, in the same transaction, so
 * an order is booked at most once per date whatever retries or second runs follow. Answers
 * how many rows it booked.
 */
export async function bookAccountSwaps(
  em: EntityManager,
  account: Account,
  group: Group,
  rollover: RolloverOfDate,
): Promise<number> {
  const due = await executeNamed<DueRow>(
    em,
    ORDERS_DUE_SWAP.bind({
      account_id: account.id,
      group_id: group.id,
      cutoff_at: rollover.cutoffAt,
      trading_date: rollover.tradingDate,
    }),
  );
  const owed = due.map((o) => ({ ticket: o.ticket, amount: swapOf(o, group, rollover) })).filter((o) => !o.amount.isZero());
  if (owed.length === 0) return 0;
  const taken = await executeNamed<{ ticket: string; amount: string }>(
    em,
    INSERT_SWAP_BOOKINGS.bind({
      rows: JSON.stringify(owed.map((o) => ({ ticket: o.ticket, amount: o.amount.toFixed(2) }))),
      trading_date: rollover.tradingDate,
      account_id: account.id,
    }),
  );
  const byTicket = new Map(taken.map((t) => [t.ticket, t.amount]));
  for (const o of owed) {
    const amount = byTicket.get(o.ticket);
    if (amount === undefined) continue;
    postToLedger(
      em,
      account,
      dec(amount),
      'swap',
      { type: 'order', id: o.ticket },
      `Swap of order ${o.ticket} for ${rollover.tradingDate}`,
    );
  }
  return byTicket.size;
}
