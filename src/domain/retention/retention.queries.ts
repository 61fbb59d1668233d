import { namedStatement } from '../../platform/named-sql';

/**
 * The retention statements: each deletes at most `:limit` rows older than `:cutoff` and
 * answers how many it deleted. Rows another transaction holds are skipped (SKIP LOCKED),
 * so a sweep never waits behind the relay, a consumer or a sender; the next batch or run
 * finds them.
 */
export interface RetentionBatch {
  cutoff: Date;
  limit: number;
}

const counted = (deletion: string) => `with gone as (${deletion} returning 1) select count(*)::int as n from gone`;

/** Inbox rows their consumer has handled: an unhandled row is work still to do. */
export const deleteHandledInboxRows = namedStatement<RetentionBatch>(
  counted(`delete from event_inbox where (event_id, consumer) in (
     select event_id, consumer from event_inbox
      where processed_at < :cutoff
      limit :limit for update skip locked)`),
);

/**
 * Finished webhook deliveries, with (by cascade) their attempts. A delivery stays
 * redeliverable for as long as it is kept: the outbox keeps its events until it goes.
 */
export const deleteFinishedWebhookDeliveries = namedStatement<RetentionBatch>(
  counted(`delete from webhook_deliveries where id in (
     select id from webhook_deliveries
      where status in ('delivered', 'failed') and updated_at < :cutoff
      limit :limit for update skip locked)`),
);

/** Mails in a final state (`queued` and `sending` are still in flight). */
export const deleteFinishedMail = namedStatement<RetentionBatch>(
  counted(`delete from mail_messages where id in (
     select id from mail_messages
      where status in ('sent', 'logged', 'failed', 'unknown') and updated_at < :cutoff
      limit :limit for update skip locked)`),
);

/**
 * Relayed outbox rows nothing needs any more: every consumer has handled its inbox row, no
 * kept webhook delivery carries the event (its body is built from it at every attempt and
 * redelivery; looked up by the delivery's publication range, then its ids), and no webhook's
 * cursor is still behind it (an active webhook's claim has yet to read it; a webhook turned
 * off still owes it up to the number drawn when it was turned off).
 */
export const deletePublishedEvents = namedStatement<RetentionBatch>(
  counted(`delete from domain_events where id in (
     select e.id from domain_events e
      where e.published_at < :cutoff
        and not exists (select 1 from event_inbox i where i.event_id = e.id and i.processed_at is null)
        and not exists (select 1 from webhook_deliveries d
                         where int8range(d.first_publication_seq, d.last_publication_seq, '[]') @> e.publication_seq
                           and e.id = any(d.event_ids))
        and not exists (select 1 from webhooks w
                         where e.publication_seq > w.cursor_seq and (w.is_active or e.publication_seq <= w.paused_seq))
      limit :limit for update of e skip locked)`),
);

/**
 * Finished reports past their age, their files (report_chunks) by cascade. A queued or
 * running report is still being built.
 */
export const deleteFinishedReports = namedStatement<RetentionBatch>(
  counted(`delete from reports where id in (
     select id from reports
      where status in ('completed', 'failed') and finished_at < :cutoff
      limit :limit for update skip locked)`),
);

/** Sign-ups past their confirmation: used, or expired (their link no longer works either way). */
export const deleteOldPendingRegistrations = namedStatement<RetentionBatch>(
  counted(`delete from pending_registrations where id in (
     select id from pending_registrations
      where created_at < :cutoff and (used_at is not null or expires_at < now())
      limit :limit for update skip locked)`),
);

/** Inbound integration calls (and their bodies) past their 30 days. */
export const deleteOldInboundCalls = namedStatement<RetentionBatch>(
  counted(`delete from integration_inbound where id in (
     select id from integration_inbound
      where created_at < :cutoff
      limit :limit for update skip locked)`),
);

/** Conversation attachments no message took, a day after their upload (their sealed files go with them). */
export const deleteUnusedAttachments = namedStatement<RetentionBatch>(
  counted(`delete from conversation_attachments where id in (
     select id from conversation_attachments
      where message_id is null and created_at < :cutoff
      limit :limit for update skip locked)`),
);
