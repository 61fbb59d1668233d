import type { EntityManager } from '@mikro-orm/postgresql';
import type { QuoteStore } from '../prices/quote-store';
import { closeAccountDay, type AccountRolloverStep } from './account-day';
import { ChunkTermsCache } from './daily-snapshot';
import { readEodRun, rolloverOfRun } from './eod-runs';

/** Some accounts of a chunk failed; the job is retried for them (those done are skipped). */
export class AccountsFailed extends Error {}

/**
 * A chunk of a run's accounts, one after the other, each in its own unit of work and
 * transaction: one account's failure never stops the others. When any failed, it throws
 * after the rest are done, so the queue retries the chunk for them.
 */
export async function closeAccountsOfRun(
  em: EntityManager,
  quotes: QuoteStore,
  runId: string,
  accountIds: readonly string[],
  steps: readonly AccountRolloverStep[] = [],
): Promise<{ done: number; failed: number }> {
  const run = await readEodRun(em, runId);
  if (run.status !== 'running') return { done: 0, failed: 0 };
  const rollover = await rolloverOfRun(em, run);
  const terms = new ChunkTermsCache();
  const failures: string[] = [];
  let done = 0;
  for (const accountId of accountIds) {
    try {
      await closeAccountDay(em.fork(), quotes, runId, accountId, rollover, { steps, terms });
      done++;
    } catch (err) {
      failures.push(`${accountId}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (failures.length) throw new AccountsFailed(`${failures.length} account(s) failed: ${failures.join('; ').slice(0, 400)}`);
  return { done, failed: 0 };
}
