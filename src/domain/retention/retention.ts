import type { EntityManager } from '@mikro-orm/postgresql';
import { executeBound } from '../../db/bound-statement';
import type { NamedStatement } from '../../platform/named-sql';
import {
  deleteFinishedMail,
  deleteFinishedWebhookDeliveries,
  deleteHandledInboxRows,
  deletePublishedEvents,
  type RetentionBatch,
} from './retention.queries';
import { STREAM_RESUME_WINDOW_HOURS, type RetentionAges } from './retention-ages';

export type RetentionOutcome = Record<'inbox' | 'webhookDeliveries' | 'mail' | 'outbox', number>;

const HOUR_MS = 3_600_000;

/**
 * Deletes rows past their age in batches of `batchSize`, each batch its own short
 * transaction, so no sweep holds locks for long. Idempotent: a second run finds nothing
 * more to delete. Inbox rows and webhook deliveries go before the outbox rows they name.
 * Stops starting batches after `budgetMs`; the next run carries on.
 */
export async function removeExpiredRows(
  em: EntityManager,
  ages: RetentionAges,
  options: { batchSize: number; budgetMs: number; now?: Date },
): Promise<RetentionOutcome> {
  const now = options.now ?? new Date();
  const deadline = Date.now() + options.budgetMs;
  const before = (hours: number) => new Date(now.getTime() - hours * HOUR_MS);
  const sweep = async (statement: NamedStatement<RetentionBatch>, cutoff: Date): Promise<number> => {
    let total = 0;
    for (;;) {
      const [row] = await executeBound<{ n: number }>(em, statement.bind({ cutoff, limit: options.batchSize }));
      total += row!.n;
      if (row!.n < options.batchSize || Date.now() >= deadline) return total;
    }
  };
  return {
    inbox: await sweep(deleteHandledInboxRows, before(ages.inboxHours)),
    webhookDeliveries: await sweep(deleteFinishedWebhookDeliveries, before(ages.webhookDeliveryHours)),
    mail: await sweep(deleteFinishedMail, before(ages.mailHours)),
    outbox: await sweep(deletePublishedEvents, before(Math.max(ages.outboxHours, STREAM_RESUME_WINDOW_HOURS))),
  };
}
