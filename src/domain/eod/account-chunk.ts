import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../entities/account.entity';
import { executeNamed } from '../../db/bound-statement';
import type { QuoteStore } from '../prices/quote-store';
import { swapOf, type RolloverOfDate, type RolloverOrder } from './account-swaps';
import { ChunkPricing, chunkTermsCache, snapshotFigures, type SnapshotFigures } from './daily-snapshot';
import type { PricingTermsCache } from '../prices/pricing-terms';
import { BOOK_CHUNK_SWAPS, LOCK_CHUNK, MARK_ACCOUNTS_DONE, OPEN_ORDERS_OF_CHUNK, WRITE_CHUNK_SNAPSHOTS } from './eod.queries';
import { readEodRun, rolloverOfRun } from './eod-runs';

/** An account of a chunk as the rollover steps see it: locked, its swaps booked, its snapshot written. */
export interface RolloverAccount {
  account: Account;
  /** The account's figures at the rollover, after its swaps (its balance and equity: a day-start equity). */
  figures: SnapshotFigures;
}

/**
 * A step of the rollover, run for a whole chunk of accounts after their swaps and snapshots in
 * the same transaction, with the account rows locked (a prop challenge takes its day-start
 * equity). A step is set-based: a statement for the chunk, never one per account, so its cost
 * does not grow with the chunk's round trips. Steps must be idempotent per (account, trading
 * date): a retried job runs them again only when the transaction that ran them rolled back.
 */
export type AccountRolloverStep = (
  em: EntityManager,
  accounts: readonly RolloverAccount[],
  rollover: RolloverOfDate,
) => Promise<void>;

/** Some accounts of a chunk failed; the job is retried for them (those done are skipped). */
export class AccountsFailed extends Error {}

/**
 * A chunk of a run's accounts. First all of them in one transaction, a statement per step for
 * the whole chunk; should that fail, each account as a chunk of its own, so one account's
 * failure never stops the others. When any failed, it throws after the rest are done, so the
 * queue retries the chunk for them.
 */
export async function closeAccountsOfRun(
  em: EntityManager,
  quotes: QuoteStore,
  runId: string,
  accountIds: readonly string[],
  steps: readonly AccountRolloverStep[] = [],
): Promise<{ done: number; one_by_one: boolean }> {
  const run = await readEodRun(em, runId);
  if (run.status !== 'running') return { done: 0, one_by_one: false };
  const rollover = await rolloverOfRun(em, run);
  const terms = chunkTermsCache();
  try {
    return { done: await closeChunk(em.fork(), quotes, runId, accountIds, rollover, steps, terms), one_by_one: false };
  } catch {
    // Someone in the chunk fails: find out who, one account at a time.
  }
  const failures: string[] = [];
  let done = 0;
  for (const accountId of accountIds) {
    try {
      await closeChunk(em.fork(), quotes, runId, [accountId], rollover, steps, terms);
      done++;
    } catch (err) {
      failures.push(`${accountId}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (failures.length) throw new AccountsFailed(`${failures.length} account(s) failed: ${failures.join('; ').slice(0, 400)}`);
  return { done, one_by_one: true };
}

/**
 * The end of day of some accounts, in one transaction and a fixed number of statements
 * whatever their number: their items of the run and their account rows are locked (in account
 * id order, as every balance change locks accounts; the account rows only, never the group
 * rows they join, which every chunk shares), their swaps are booked, their snapshots written
 * and their items marked done, then the steps run, each once for the chunk. An item decided
 * already is skipped; an account whose snapshot of the date exists (an earlier run did the
 * date) is marked done with nothing booked.
 */
async function closeChunk(
  em: EntityManager,
  quotes: QuoteStore,
  runId: string,
  accountIds: readonly string[],
  rollover: RolloverOfDate,
  steps: readonly AccountRolloverStep[],
  terms: PricingTermsCache,
): Promise<number> {
  return em.transactional(async (tx) => {
    const items = await executeNamed<{ account_id: string; has_snapshot: boolean }>(
      tx,
      LOCK_CHUNK.bind({ run_id: runId, account_ids: JSON.stringify(accountIds), trading_date: rollover.tradingDate }),
    );
    if (items.length === 0) return 0;
    const ids = items.filter((i) => !i.has_snapshot).map((i) => i.account_id);
    // The rows are locked by LOCK_CHUNK: this read sees what the swaps and snapshots will.
    const accounts = ids.length
      ? await tx.find(Account, { id: { $in: ids } }, { populate: ['group'], orderBy: { id: 'asc' } })
      : [];
    const trading = accounts.filter((a) => a.group?.getEntity());
    const tradingIds = new Set(trading.map((a) => a.id));
    const idle = items.map((i) => i.account_id).filter((id) => !tradingIds.has(id));
    if (idle.length) await executeNamed(tx, MARK_ACCOUNTS_DONE.bind({ run_id: runId, account_ids: JSON.stringify(idle) }));
    if (trading.length === 0) return items.length;

    const orders = await executeNamed<RolloverOrder & { account_id: string }>(
      tx,
      OPEN_ORDERS_OF_CHUNK.bind({
        account_ids: JSON.stringify(trading.map((a) => a.id)),
        cutoff_at: rollover.cutoffAt,
        trading_date: rollover.tradingDate,
      }),
    );
    const byAccount = new Map<string, RolloverOrder[]>();
    for (const o of orders) {
      const list = byAccount.get(o.account_id);
      if (list) list.push(o);
      else byAccount.set(o.account_id, [o]);
    }

    const owed: { account_id: string; ticket: string; amount: string }[] = [];
    for (const a of trading)
      for (const o of byAccount.get(a.id) ?? []) {
        if (!o.due) continue;
        const amount = swapOf(o, a.group!.getEntity(), rollover);
        if (!amount.isZero()) owed.push({ account_id: a.id, ticket: o.ticket, amount: amount.toFixed(2) });
      }
    const booked = new Map<string, { balance: string; booked: number }>();
    if (owed.length) {
      const rows = await executeNamed<{ account_id: string; balance: string; booked: number }>(
        tx,
        BOOK_CHUNK_SWAPS.bind({ rows: JSON.stringify(owed), trading_date: rollover.tradingDate }),
      );
      for (const r of rows) booked.set(r.account_id, r);
    }

    const pricing = new ChunkPricing(tx, quotes, terms);
    const snapshots = [];
    const rolled: RolloverAccount[] = [];
    for (const account of trading) {
      const open = (byAccount.get(account.id) ?? []).map((o) => ({
        symbol: o.symbol,
        cmd: Number(o.cmd) as 0 | 1,
        volume: o.volume,
        contractSize: o.contract_size,
        openPrice: o.open_price,
      }));
      const swaps = booked.get(account.id);
      const figures = await snapshotFigures(pricing, account, swaps?.balance ?? account.balance, open);
      rolled.push({ account, figures });
      snapshots.push({
        account_id: account.id,
        login: account.login,
        ...figures,
        open_orders: open.length,
        swaps: swaps?.booked ?? 0,
      });
    }
    await executeNamed(
      tx,
      WRITE_CHUNK_SNAPSHOTS.bind({ run_id: runId, trading_date: rollover.tradingDate, rows: JSON.stringify(snapshots) }),
    );
    for (const step of steps) await step(tx, rolled, rollover);
    return items.length;
  });
}
