import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../entities/account.entity';
import { executeNamed } from '../../db/bound-statement';
import { LOCK_OPEN_ORDERS } from '../accounts/accounts.queries';
import type { QuoteStore } from '../prices/quote-store';
import { bookAccountSwaps, type RolloverOfDate } from './account-swaps';
import { writeDailySnapshot } from './daily-snapshot';
import { LOCK_RUN_ACCOUNT, MARK_ACCOUNT_DONE, SNAPSHOT_EXISTS } from './eod.queries';

export type AccountDayOutcome = 'done' | 'skipped';

/**
 * A step of an account's rollover, run after its swaps and snapshot in the same transaction,
 * with the account row locked (e.g. a prop challenge capturing its day-start equity). Steps
 * must be idempotent per (account, trading date): a retried job runs them again only when the
 * transaction that ran them rolled back.
 */
export type AccountRolloverStep = (em: EntityManager, account: Account, rollover: RolloverOfDate) => Promise<void>;

/**
 * One account's end of day, in one transaction: its open orders then its row are locked (the
 * order every close and margin check takes), its swaps are booked, its snapshot is written,
 * the extra steps run, and its item of the run is marked done. An account whose item is
 * decided already, or whose snapshot of the date exists (an earlier run did it), books nothing.
 */
export async function closeAccountDay(
  em: EntityManager,
  quotes: QuoteStore,
  runId: string,
  accountId: string,
  rollover: RolloverOfDate,
  steps: readonly AccountRolloverStep[] = [],
): Promise<AccountDayOutcome> {
  return em.transactional(async (tx) => {
    const [item] = await executeNamed<{ status: string }>(tx, LOCK_RUN_ACCOUNT.bind({ run_id: runId, account_id: accountId }));
    if (!item || item.status !== 'pending') return 'skipped';
    await executeNamed(tx, LOCK_OPEN_ORDERS.bind({ account_id: accountId }));
    const account = await tx.findOne(Account, accountId, {
      lockMode: LockMode.PESSIMISTIC_WRITE,
      refresh: true,
      populate: ['group'],
    });
    const group = account?.group?.getEntity();
    const done = (swaps: number, snapshot: boolean) =>
      executeNamed(tx, MARK_ACCOUNT_DONE.bind({ run_id: runId, account_id: accountId, swaps, snapshot }));
    const already = await executeNamed(tx, SNAPSHOT_EXISTS.bind({ account_id: accountId, trading_date: rollover.tradingDate }));
    if (!account || !group || already.length > 0) {
      await done(0, false);
      return 'done';
    }
    const swaps = await bookAccountSwaps(tx, account, group, rollover);
    // The swap rows must be in the table before the snapshot sums the account's rows.
    await tx.flush();
    const snapshot = await writeDailySnapshot(tx, quotes, account, rollover.tradingDate);
    for (const step of steps) await step(tx, account, rollover);
    await done(swaps, snapshot);
    return 'done';
  });
}
