import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../entities/account.entity';
import { executeNamed } from '../../db/bound-statement';
import type { QuoteStore } from '../prices/quote-store';
import { bookAccountSwaps, type RolloverOfDate, type RolloverOrder } from './account-swaps';
import { ChunkTermsCache, writeDailySnapshot, type SnapshotFigures } from './daily-snapshot';
import { LOCK_RUN_ACCOUNT, MARK_ACCOUNT_DONE, OPEN_ORDERS_OF_ROLLOVER } from './eod.queries';

export type AccountDayOutcome = 'done' | 'skipped';

/**
 * A step of an account's rollover, run after its swaps and snapshot in the same transaction,
 * with the account row locked (e.g. a prop challenge capturing its day-start equity). Steps
 * must be idempotent per (account, trading date): a retried job runs them again only when the
 * transaction that ran them rolled back.
 */
export type AccountRolloverStep = (
  em: EntityManager,
  account: Account,
  rollover: RolloverOfDate,
  /** The account's figures at the rollover, after its swaps (its balance and equity: a day-start equity). */
  figures: SnapshotFigures,
) => Promise<void>;

/**
 * One account's end of day, in one transaction: its item of the run and its row are locked,
 * its swaps are booked, its snapshot is written and its item marked done, then the extra steps
 * run. The account row lock is what every close and balance change takes, so the balance and
 * the open orders read here are the ones the swaps and the snapshot see. An account whose item
 * is decided already books nothing; one whose snapshot of the date exists (an earlier run did
 * the date) is marked done with nothing booked.
 */
export async function closeAccountDay(
  em: EntityManager,
  quotes: QuoteStore,
  runId: string,
  accountId: string,
  rollover: RolloverOfDate,
  options: { steps?: readonly AccountRolloverStep[]; terms?: ChunkTermsCache } = {},
): Promise<AccountDayOutcome> {
  return em.transactional(async (tx) => {
    const [item] = await executeNamed<{ status: string; has_snapshot: boolean }>(
      tx,
      LOCK_RUN_ACCOUNT.bind({ run_id: runId, account_id: accountId, trading_date: rollover.tradingDate }),
    );
    if (!item || item.status !== 'pending') return 'skipped';
    const account = await tx.findOne(Account, accountId, { lockMode: LockMode.PESSIMISTIC_WRITE, populate: ['group'] });
    const group = account?.group?.getEntity();
    if (!account || !group || item.has_snapshot) {
      await executeNamed(tx, MARK_ACCOUNT_DONE.bind({ run_id: runId, account_id: accountId }));
      return 'done';
    }
    const open = await executeNamed<RolloverOrder>(
      tx,
      OPEN_ORDERS_OF_ROLLOVER.bind({
        account_id: accountId,
        group_id: group.id,
        cutoff_at: rollover.cutoffAt,
        trading_date: rollover.tradingDate,
      }),
    );
    const swaps = await bookAccountSwaps(tx, accountId, group, open, rollover);
    const figures = await writeDailySnapshot(tx, quotes, options.terms ?? new ChunkTermsCache(), {
      runId,
      account,
      balance: swaps.balance ?? account.balance,
      open: open.map((o) => ({
        symbol: o.symbol,
        cmd: Number(o.cmd) as 0 | 1,
        volume: o.volume,
        contractSize: o.contract_size,
        openPrice: o.open_price,
      })),
      swaps: swaps.booked,
      tradingDate: rollover.tradingDate,
    });
    for (const step of options.steps ?? []) await step(tx, account, rollover, figures);
    return 'done';
  });
}
