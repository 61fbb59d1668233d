import type { EntityManager } from '@mikro-orm/postgresql';
import { executeBound } from '../../db/bound-statement';
import type { NamedStatement } from '../../platform/named-sql';
import {
  deleteFinishedMail,
  deleteFinishedWebhookDeliveries,
  deleteHandledInboxRows,
  deleteFinishedReports,
  deletePublishedEvents,
  deleteOldInboundCalls,
  deleteOldPendingRegistrations,
  deleteUnusedAttachments,
  type RetentionBatch,
} from './retention.queries';
import {
  INBOUND_CALL_RETENTION_HOURS,
  PENDING_REGISTRATION_RETENTION_HOURS,
  UNUSED_ATTACHMENT_RETENTION_HOURS,
  STREAM_RESUME_WINDOW_HOURS,
  type RetentionAges,
} from './retention-ages';

export type RetentionOutcome = Record<
  'inbox' | 'webhookDeliveries' | 'mail' | 'outbox' | 'reports' | 'inbound' | 'registrations' | 'attachments',
  number
>;

const HOUR_MS = 3_600_000;
/** Reports per delete: each takes its file's chunks (up to a MiB apiece) with it. */
const REPORT_BATCH = 10;

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
  const sweep = async (statement: NamedStatement<RetentionBatch>, cutoff: Date, limit = options.batchSize): Promise<number> => {
    let total = 0;
    for (;;) {
      const [row] = await executeBound<{ n: number }>(em, statement.bind({ cutoff, limit }));
      total += row!.n;
      if (row!.n < limit || Date.now() >= deadline) return total;
    }
  };
  return {
    inbox: await sweep(deleteHandledInboxRows, before(ages.inboxHours)),
    webhookDeliveries: await sweep(deleteFinishedWebhookDeliveries, before(ages.webhookDeliveryHours)),
    mail: await sweep(deleteFinishedMail, before(ages.mailHours)),
    outbox: await sweep(deletePublishedEvents, before(Math.max(ages.outboxHours, STREAM_RESUME_WINDOW_HOURS))),
    reports: await sweep(deleteFinishedReports, before(ages.reportDays * 24), Math.min(options.batchSize, REPORT_BATCH)),
    inbound: await sweep(deleteOldInboundCalls, before(INBOUND_CALL_RETENTION_HOURS)),
    registrations: await sweep(deleteOldPendingRegistrations, before(PENDING_REGISTRATION_RETENTION_HOURS)),
    // Up to 10 MiB each, as reports' files: small batches.
    attachments: await sweep(
      deleteUnusedAttachments,
      before(UNUSED_ATTACHMENT_RETENTION_HOURS),
      Math.min(options.batchSize, REPORT_BATCH),
    ),
  };
}
