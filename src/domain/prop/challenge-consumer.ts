import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { JobProducer } from '../../jobs/job-producer';
import { PropAfterCloseJob, PropCloseOutJob } from '../../jobs/prop-challenges.job';
import { defineConsumer, processInbox, type OutboxEvent } from '../events/consumers';
import type { QuoteStore } from '../prices/quote-store';
import { evaluateChallengesOfLogins, type ChallengeOutcome } from './challenge-evaluation';

/**
 * The rules after every close: the outbox hands this consumer each `order.closed` (whatever
 * closed it: the trader, the desk, sl or tp, a stop-out), and its worker evaluates the
 * account's active challenge, the pass included. Most closes are on other accounts: those
 * cost one indexed lookup per batch.
 */
export const PropChallengesConsumer = defineConsumer({
  name: 'prop-challenges',
  wants: (event: OutboxEvent) => event.type === 'order.closed',
  kick: PropAfterCloseJob,
});

/** Inbox rows one evaluating transaction takes at once. */
const BATCH = 200;

/**
 * Drains the consumer's inbox: each batch's evaluation commits with its rows marked processed,
 * so a close is evaluated once with any number of workers (a decision is conditional anyway).
 * The close-outs of the challenges it failed are queued after each commit.
 */
export async function drainClosesForChallenges(
  em: EntityManager,
  deps: { quotes: QuoteStore; jobs: Pick<JobProducer, 'ensureQueued'>; logger?: Logger },
): Promise<{ processed: number; failed: number; passed: number }> {
  const totals = { processed: 0, failed: 0, passed: 0 };
  for (;;) {
    let outcome: ChallengeOutcome | null = null;
    const n = await processInbox(em, PropChallengesConsumer.name, BATCH, async (tx, events) => {
      const logins = [...new Set(events.map((e) => Number(e.data.login)).filter((l) => Number.isSafeInteger(l)))];
      outcome = await evaluateChallengesOfLogins(tx, deps.quotes, logins);
    });
    const decided = outcome as ChallengeOutcome | null;
    if (decided) {
      await queueCloseOuts(deps.jobs, decided.failed);
      totals.failed += decided.failed.length;
      totals.passed += decided.passed.length;
      if (decided.passErrors.length)
        deps.logger?.warn({ pass_errors: decided.passErrors }, 'challenges reached their target but could not pass yet');
    }
    if (n === 0) return totals;
    totals.processed += n;
  }
}

/** Queues the close-out of each failed challenge (one waiting job per challenge). */
export async function queueCloseOuts(jobs: Pick<JobProducer, 'ensureQueued'>, challengeIds: string[]): Promise<void> {
  await Promise.all(challengeIds.map((id) => jobs.ensureQueued(PropCloseOutJob, { challenge_id: id })));
}
